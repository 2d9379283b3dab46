// RAII scopes for bf16 autocast. LibTorch 1.13 has no C++ guard and its CUDA autocast calls differ from
// torch 2.x (set_autocast_enabled(device_type, …)): AutocastGuard hides both behind one constructor.
// AutocastPass keeps autocast's casts of the weights over a pass of several autocast scopes.
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

/// One pass over micro-batches (a GradCache pass, plain accumulation's micro-batches): the autocast scopes opened
/// inside it, one per encoder call, share autocast's casts of the trainable weights, each cast once per pass instead
/// of once per call; leaving it drops them. A pass is all without a graph or all with one: LibTorch releases
/// before the fix of pytorch#158232 cache a cast made under no_grad without a graph, and a pass with one that
/// reused it would give its weight no gradient. Without autocast it does nothing (nothing is cast).
class AutocastPass {
 public:
  AutocastPass() { at::autocast::increment_nesting(); }
  ~AutocastPass() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  }
  AutocastPass(const AutocastPass&) = delete;
  AutocastPass& operator=(const AutocastPass&) = delete;
};

}  // namespace ragmig::train
