// Generators are reached through at::globalContext(), which works in CPU-only and CUDA builds alike.
#include "model/rng_state.h"

#include <ATen/Context.h>

namespace ragmig::model {
namespace {

int64_t cuda_devices() {
  return torch::cuda::is_available() ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
}

}  // namespace

RngState capture_rng_state() {
  RngState s;
  s.cpu = at::globalContext().defaultGenerator(at::kCPU).get_state();
  for (int64_t d = 0; d < cuda_devices(); ++d)
    s.cuda.push_back(at::globalContext().defaultGenerator(at::Device(at::kCUDA, d)).get_state());
  return s;
}

void restore_rng_state(const RngState& s) {
  {
    auto gen = at::globalContext().defaultGenerator(at::kCPU);
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(s.cpu);
  }
  for (size_t d = 0; d < s.cuda.size() && static_cast<int64_t>(d) < cuda_devices(); ++d) {
    auto gen = at::globalContext().defaultGenerator(at::Device(at::kCUDA, static_cast<int64_t>(d)));
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(s.cuda[d]);
  }
}

}  // namespace ragmig::model
