// Foreach clipping and fused AdamW (see fused_step.h).
#include "train/fused_step.h"

#include "core/error.h"

namespace ragmig::train {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define RAGMIG_HAS_FUSED_ADAMW 1
#else
#define RAGMIG_HAS_FUSED_ADAMW 0
#endif
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define RAGMIG_HAS_CPU_FUSED_ADAMW 1
#else
#define RAGMIG_HAS_CPU_FUSED_ADAMW 0
#endif

bool fused_step_available(const torch::Device& device) {
  return device.is_cuda() ? RAGMIG_HAS_FUSED_ADAMW : device.is_cpu() && RAGMIG_HAS_CPU_FUSED_ADAMW;
}

void clip_grad_norm_on_device(const std::vector<torch::Tensor>& params, double max_norm) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return;
  // Norms in float32 whatever the gradients' dtype, then one factor for all.
  const auto norms = at::_foreach_norm(grads, 2);
  const auto total = torch::stack(norms).to(torch::kFloat).norm(2);
  const auto coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
  at::_foreach_mul_(grads, coef);
}

void FusedAdamW::step() {
#if RAGMIG_HAS_FUSED_ADAMW
  torch::NoGradGuard no_grad;
  auto& state = optimizer_.state();
  size_t slot = 0;
  for (auto& group : optimizer_.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    if (o.amsgrad()) throw ConfigError("the fused AdamW step does not do AMSGrad");
    std::vector<torch::Tensor> params, grads, avgs, sqs, steps;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto key = p.unsafeGetTensorImpl();
      auto it = state.find(key);
      if (it == state.end()) {  // as AdamW::step creates it
        auto s = std::make_unique<torch::optim::AdamWParamState>();
        s->step(0);
        s->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        s->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        it = state.emplace(key, std::move(s)).first;
      }
      auto& s = static_cast<torch::optim::AdamWParamState&>(*it->second);
      if (slot == counts_.size()) counts_.emplace_back();
      if (counts_[slot].of != it->second.get())  // new or replaced state: the device count starts from the state's
        counts_[slot] = {it->second.get(), torch::full({}, static_cast<double>(s.step()),
                                                       torch::TensorOptions().dtype(torch::kFloat).device(p.device()))};
      s.step(s.step() + 1);
      params.push_back(p);
      grads.push_back(p.grad());
      avgs.push_back(s.exp_avg());
      sqs.push_back(s.exp_avg_sq());
      steps.push_back(counts_[slot].step);
      ++slot;
    }
    if (params.empty()) continue;
    at::_foreach_add_(steps, 1.0);
    const auto [beta1, beta2] = o.betas();
    at::_fused_adamw_(params, grads, avgs, sqs, {}, steps, o.lr(), beta1, beta2, o.weight_decay(), o.eps(),
                      /*amsgrad=*/false, /*maximize=*/false);
  }
#else
  throw ConfigError("this LibTorch has no fused AdamW kernel");
#endif
}

}  // namespace ragmig::train
