// The optimiser's part of a training step in a few large kernels. LibTorch's C++ clip_grad_norm_ and AdamW walk
// the parameters one by one: on a GPU, BERT-base's ~200 tensors cost ~2,000 small kernel launches per step and
// clip_grad_norm_ copies the norm to the host (a device synchronisation) to return it; on a CPU, AdamW makes about
// eight passes over each parameter's memory and two temporaries of its size. Here clipping is two multi-tensor
// (foreach) kernels whose factor stays on the device, and AdamW runs through LibTorch's fused kernel (what
// PyTorch's AdamW(fused=True) calls: on a GPU from LibTorch 2.1, one vectorised pass per parameter on a CPU from
// 2.4; bench_train --optimizer: 2.43x LibTorch's loops on MiniLM's parameters, two threads) on the optimiser's own
// state, so checkpoints keep the same layout and a run can resume either way.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace ragmig::train {

/// Whether this build's LibTorch has the fused kernels for `device` (a CUDA device from LibTorch 2.1, the CPU
/// from 2.4).
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
