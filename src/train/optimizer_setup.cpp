// The optimiser of a training run (see optimizer_setup.h).
#include "train/optimizer_setup.h"

#include <string>
#include <utility>
#include <vector>

namespace ragmig::train {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(model::DualEncoder& net, const torch::Tensor& logit_scale,
                                                        const TrainOptions& t) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& item : net->named_parameters()) {
    if (!item.value().requires_grad()) continue;  // frozen (the base model under LoRA)
    const std::string& name = item.key();
    const bool plain = name.find("bias") != std::string::npos || name.find("LayerNorm") != std::string::npos;
    (plain ? no_decay : decay).push_back(item.value());
  }
  if (logit_scale.requires_grad()) no_decay.push_back(logit_scale);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  if (t.optimizer == "sgd") {
    auto opts = [&](double wd) {
      return std::make_unique<torch::optim::SGDOptions>(torch::optim::SGDOptions(t.lr).weight_decay(wd));
    };
    groups.emplace_back(decay, opts(t.weight_decay));
    groups.emplace_back(no_decay, opts(0.0));
    return std::make_unique<torch::optim::SGD>(std::move(groups), torch::optim::SGDOptions(t.lr));
  }
  auto opts = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(t.lr).weight_decay(wd));
  };
  groups.emplace_back(decay, opts(t.weight_decay));
  groups.emplace_back(no_decay, opts(0.0));
  return std::make_unique<torch::optim::AdamW>(std::move(groups), torch::optim::AdamWOptions(t.lr));
}

double state_memory_mb(model::DualEncoder& net, const TrainOptions& t) {
  double bytes = 0;
  for (const auto& p : net->parameters()) {
    const auto n = static_cast<double>(p.numel() * p.element_size());
    bytes += n;
    if (p.requires_grad()) bytes += n * (t.optimizer == "sgd" ? 1 : 3);
  }
  return bytes / (1 << 20);
}

}  // namespace ragmig::train
