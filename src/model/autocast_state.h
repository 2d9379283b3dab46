// Autocast's thread-local state on a device type (on or off, and the dtype it computes in), behind one interface for
// LibTorch 1.13, whose CUDA and CPU calls differ, and 2.x. bert.cpp reads it, activation checkpointing sets it again
// for a layer's recompute, train/autocast_guard.h opens bf16 scopes with it.
#pragma once

#include <torch/torch.h>

namespace ragmig::model {

struct AutocastState {
  bool enabled = false;
  at::ScalarType dtype = at::kBFloat16;  ///< what it computes in while enabled
};

/// The state on `device`'s type (CPU or CUDA) in this thread.
AutocastState autocast_state(const torch::Device& device);

/// Sets it on `device`'s type in this thread; returns the state it replaced.
AutocastState set_autocast_state(const torch::Device& device, const AutocastState& state);

}  // namespace ragmig::model
