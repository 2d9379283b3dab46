// Work split over LibTorch's OpenMP threads for files that include LibTorch's headers. Those compile without OpenMP
// (src/model/CMakeLists.txt), and at::parallel_for's region is a pragma in its header: compiled there it runs the
// whole range on the calling thread. This runs it in a region compiled with OpenMP (cpu_parallel.cpp).
#pragma once

#include <cstdint>
#include <functional>

namespace ragmig::model {

namespace detail {
void openmp_ranges(int64_t n, const std::function<void(int64_t, int64_t)>& fn);  // cpu_parallel.cpp
}  // namespace detail

/// fn(begin, end) over [0, n) in one contiguous range per thread (at most n threads), on LibTorch's intra-op
/// threads; on the calling thread alone inside another OpenMP region or with one thread. LibTorch's ops called from
/// fn see themselves inside a parallel region and run on their own thread; fn sets what else it needs of the
/// caller's thread-local state (autograd, autocast, inference mode). The first exception a range throws is
/// rethrown here once every range has finished. Under ThreadSanitizer, which cannot see libgomp's barriers
/// (src/model/CMakeLists.txt), fn(0, n) on the calling thread.
inline void parallel_ranges(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
#if defined(__SANITIZE_THREAD__)
  if (n > 0) fn(0, n);
#else
  detail::openmp_ranges(n, fn);
#endif
}

}  // namespace ragmig::model
