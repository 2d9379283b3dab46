// The optimiser's part of a training step in a few large kernels on a GPU. LibTorch's C++ clip_grad_norm_
// and AdamW walk the parameters one by one: BERT-base's ~200 tensors cost ~2,000 small kernel launches per
// step and clip_grad_norm_ copies the norm to the host (a device synchronisation) to return it. Here clipping
// is two multi-tensor (foreach) kernels whose factor stays on the device, and AdamW runs through LibTorch's
// fused multi-tensor kernel (what PyTorch's AdamW(fused=True) calls) on the optimiser's own state, so
// checkpoints keep the same layout and a run can resume either way. CPU runs keep LibTorch's own loops
// (their results are what the bit-exact resume tests pin).
#pragma once

#include <torch/torch.h>

#include <vector>

namespace ragmig::train {

/// Whether this build's LibTorch has the fused kernels and `device` can run them (a CUDA device, LibTorch >= 2.1).
bool fused_step_available(const torch::Device& device);

/// Scales the gradients of `params` so that their joint L2 norm is at most max_norm (as clip_grad_norm_ with
/// PyTorch's foreach path: coefficient max_norm / (norm + 1e-6), capped at 1), without reading the norm back.
void clip_grad_norm_on_device(const std::vector<torch::Tensor>& params, double max_norm);

/// One AdamW step of `optimizer` (torch::optim::AdamW) through the fused kernel, group by group, with each group's
/// lr, betas, eps and weight decay; creates missing state as AdamW::step does. Steps are counted on the device
/// (one tensor per parameter, rebuilt from the state's counts when the optimiser's state was replaced, e.g. by a
/// checkpoint) and in the state, which checkpoints save. AMSGrad is refused.
class FusedAdamW {
 public:
  explicit FusedAdamW(torch::optim::AdamW& optimizer) : optimizer_(optimizer) {}
  void step();

 private:
  struct DeviceCount {
    const torch::optim::OptimizerParamState* of = nullptr;  // the state it was built from
    torch::Tensor step;                                     // float step count on the parameter's device
  };
  torch::optim::AdamW& optimizer_;
  std::vector<DeviceCount> counts_;  // one per parameter with a gradient, in group order
};

}  // namespace ragmig::train
