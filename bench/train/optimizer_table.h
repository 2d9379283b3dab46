// bench/train's optimiser table: the optimiser's part of a training step (gradient clipping to norm 1, then AdamW
// with weight decay 0.01 on matrices and none on vectors, as the trainer groups them) over an encoder's
// parameters, through LibTorch's per-parameter loops (torch::nn::utils::clip_grad_norm_, torch::optim::AdamW)
// beside train/fused_step.h (foreach clipping, LibTorch's fused AdamW kernel), on the same weights and gradients.
#pragma once

#include <fmt/format.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "common/bench_support.h"
#include "model/bert.h"
#include "train/fused_step.h"

namespace ragmig::bench {

/// An AdamW over `params` in the trainer's two groups: train/optimizer_setup.h's make_optimizer leaves biases and
/// LayerNorm weights undecayed by name, which in a BERT are exactly its 1-d tensors.
inline std::unique_ptr<torch::optim::AdamW> trainer_like_adamw(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> decay, plain;
  for (const auto& p : params) (p.dim() >= 2 ? decay : plain).push_back(p);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(2e-5).weight_decay(0.01)));
  groups.emplace_back(plain, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(2e-5).weight_decay(0.0)));
  return std::make_unique<torch::optim::AdamW>(std::move(groups), torch::optim::AdamWOptions(2e-5));
}

inline void print_optimizer_table(double min_seconds) {
  const torch::Device cpu(torch::kCPU);
  fmt::print("\nOptimiser step (clip to norm 1, AdamW) over an encoder's parameters, ms per step, {} threads:\n"
             "{:<22} {:>10} {:>10} {:>10} {:>7}\n",
             at::get_num_threads(), "encoder", "tensors", "LibTorch", "fused", "ratio");
  if (!train::fused_step_available(cpu)) {
    fmt::print("(this LibTorch has no fused AdamW kernel on CPU: LibTorch >= 2.4 has)\n");
    return;
  }
  struct Shape {
    std::string name;
    model::BertConfig config;
  };
  model::BertConfig minilm;
  minilm.hidden_size = 384;
  minilm.num_hidden_layers = 6;
  minilm.intermediate_size = 1536;
  for (const Shape& s : {Shape{"MiniLM-L6 shape", minilm}, Shape{"BERT-base shape", model::BertConfig{}}}) {
    torch::manual_seed(0);
    model::BertModel loop_model(s.config), fused_model(s.config);
    const auto loop_params = loop_model->parameters(), fused_params = fused_model->parameters();
    int64_t count = 0;
    for (size_t i = 0; i < loop_params.size(); ++i) {
      const auto grad = torch::randn_like(loop_params[i]);
      loop_params[i].mutable_grad() = grad.clone();
      fused_params[i].mutable_grad() = grad;
      count += loop_params[i].numel();
    }
    // Clipping rescales the gradients in place: each call scales them down once more, as every step's new
    // gradients would be scaled; the work per call is the same.
    auto loop = trainer_like_adamw(loop_params);
    const double loop_s = seconds_per_call(
        [&] {
          torch::nn::utils::clip_grad_norm_(loop_params, 1.0);
          loop->step();
        },
        min_seconds);
    auto fused_state = trainer_like_adamw(fused_params);
    train::FusedAdamW fused(*fused_state);
    const double fused_s = seconds_per_call(
        [&] {
          train::clip_grad_norm_on_device(fused_params, 1.0);
          fused.step();
        },
        min_seconds);
    fmt::print("{:<22} {:>10} {:>10.1f} {:>10.1f} {:>6.2f}x\n",
               fmt::format("{} ({:.1f}M)", s.name, static_cast<double>(count) / 1e6), loop_params.size(),
               1e3 * loop_s, 1e3 * fused_s, loop_s / fused_s);
  }
}

}  // namespace ragmig::bench
