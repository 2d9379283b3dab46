// A small work-sharing loop for the index module's multi-threaded build and search: plain std::threads
// pulling fixed-size chunks from a shared counter, so uneven work (long queries) still balances.
#pragma once

#include <cstdint>
#include <functional>

namespace ragmig::index {

/// Calls fn(begin, end, worker) for consecutive chunks of at most `grain` items covering [0, n), on up to
/// `threads` threads (worker in [0, threads)); threads <= 1 runs inline. The first exception thrown by fn
/// is rethrown after all threads have stopped.
void parallel_for(int64_t n, int threads, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn);

/// threads when > 0, else core's default_compute_threads() (OMP_NUM_THREADS, or the usable cores).
int resolve_threads(int threads);

}  // namespace ragmig::index
