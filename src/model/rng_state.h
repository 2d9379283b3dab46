// Snapshots of LibTorch's default random generators (CPU and, when present, every CUDA device): GradCache
// replays dropout masks with them, activation checkpointing runs a layer again with them, and checkpoints store
// them for bit-exact resume.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace ragmig::model {

struct RngState {
  torch::Tensor cpu;                ///< state of the default CPU generator
  std::vector<torch::Tensor> cuda;  ///< state of each CUDA device's default generator
};

RngState capture_rng_state();
void restore_rng_state(const RngState& state);

}  // namespace ragmig::model
