// A range over LibTorch's OpenMP threads (see cpu_parallel.h); compiled with OpenMP, without LibTorch's headers.
#include "model/cpu_parallel.h"

#include <exception>
#include <mutex>

#include "model/cpu_lanes.h"

namespace ragmig::model {

void detail::openmp_ranges(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  std::exception_ptr error;
  std::mutex error_mutex;
  lanes::for_each_range(n, 1, [&](int64_t begin, int64_t end) {
    try {
      fn(begin, end);
    } catch (...) {  // an exception must not leave an OpenMP region
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  });
  if (error) std::rethrow_exception(error);
}

}  // namespace ragmig::model
