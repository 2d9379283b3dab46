// parallel_for (see parallel.h).
#include "index/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/cpu_threads.h"

namespace ragmig::index {

int resolve_threads(int threads) {
  return threads > 0 ? threads : default_compute_threads();
}

void parallel_for(int64_t n, int threads, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t chunks = (n + grain - 1) / grain;
  const int workers = static_cast<int>(std::min<int64_t>(std::max(1, threads), chunks));
  if (workers <= 1) {
    for (int64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain), 0);
    return;
  }
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&](int worker) {
    while (!failed.load(std::memory_order_relaxed)) {
      const int64_t b = next.fetch_add(grain);
      if (b >= n) return;
      try {
        fn(b, std::min(n, b + grain), worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace ragmig::index
