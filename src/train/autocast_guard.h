// RAII scope for bf16 autocast. LibTorch 1.13 has no C++ guard and its CUDA autocast calls differ from
// torch 2.x (set_autocast_enabled(device_type, …)): this header hides both behind one constructor.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace ragmig::train {

class AutocastGuard {
 public:
  /// Enables bf16 autocast on `device`'s type when `enabled`; restores the previous state on destruction.
  AutocastGuard(const torch::Device& device, bool enabled) : cuda_(device.is_cuda()), enabled_(enabled) {
    if (!enabled_) return;
#if TORCH_VERSION_MAJOR >= 2
    const auto type = cuda_ ? at::kCUDA : at::kCPU;
    prev_ = at::autocast::is_autocast_enabled(type);
    at::autocast::set_autocast_dtype(type, at::kBFloat16);
    at::autocast::set_autocast_enabled(type, true);
#else
    if (cuda_) {
      prev_ = at::autocast::is_enabled();
      at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
      at::autocast::set_enabled(true);
    } else {
      prev_ = at::autocast::is_cpu_enabled();
      at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
      at::autocast::set_cpu_enabled(true);
    }
#endif
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (!enabled_) return;
    // Leaving the outermost autocast scope drops its cache of casted weights, as Python's autocast does.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if TORCH_VERSION_MAJOR >= 2
    at::autocast::set_autocast_enabled(cuda_ ? at::kCUDA : at::kCPU, prev_);
#else
    if (cuda_) at::autocast::set_enabled(prev_);
    else at::autocast::set_cpu_enabled(prev_);
#endif
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool cuda_;
  bool enabled_;
  bool prev_ = false;
};

}  // namespace ragmig::train
