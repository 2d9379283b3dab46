// RAII scopes for bf16 autocast. LibTorch 1.13 has no C++ guard; AutocastGuard is one, over
// model/autocast_state.h (which hides 1.13's CUDA and CPU calls and 2.x's behind one interface).
// AutocastPass keeps autocast's casts of the weights over a pass of several autocast scopes.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "model/autocast_state.h"

namespace ragmig::train {

class AutocastGuard {
 public:
  /// Enables bf16 autocast on `device`'s type when `enabled`; restores the previous state on destruction.
  AutocastGuard(const torch::Device& device, bool enabled) : device_(device), enabled_(enabled) {
    if (!enabled_) return;
    prev_ = model::set_autocast_state(device_, {true, at::kBFloat16});
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (!enabled_) return;
    // Leaving the outermost autocast scope drops its cache of casted weights, as Python's autocast does.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    model::set_autocast_state(device_, prev_);
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  torch::Device device_;
  bool enabled_;
  model::AutocastState prev_;
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
