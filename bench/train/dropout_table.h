// bench/train's dropout table: ragmig's keyed dropout (model/keyed_dropout.h) beside LibTorch's own on one
// attention-probabilities tensor of the MiniLM SQuAD rows (batch 32, 12 heads, passages of 256 tokens: the
// largest tensor a training step drops, once per layer). Forward: keyed dropout keeping its bits against
// torch::dropout (a bernoulli_ mask, then the product). Backward: the gradient times the mask kept as bits against
// autograd's grad * mask (LibTorch's vectorised product over a mask of the tensor's size).
#pragma once

#include <fmt/format.h>
#include <torch/torch.h>

#include "common/bench_support.h"
#include "model/keyed_dropout.h"
#include "model/keyed_dropout_kernels.h"

namespace ragmig::bench {

inline void print_dropout_table(double min_seconds) {
  const double p = 0.1;
  const torch::Tensor probs = torch::softmax(torch::randn({32, 12, 256, 256}), -1);
  fmt::print("\nDropout on attention probabilities 32x12x256x256 ({:.1f}M elements), p = {}, ms per call, {} "
             "threads:\n{:<14} {:>10} {:>15} {:>6} {:>10} {:>10} {:>6}\n",
             static_cast<double>(probs.numel()) / 1e6, p, at::get_num_threads(), "dtype, loops", "keyed fwd",
             "torch::dropout", "ratio", "keyed bwd", "grad*mask", "ratio");
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    const torch::Tensor x = probs.to(dtype);
    const uint64_t key = model::keyed_dropout_key();
    const torch::Tensor bits = model::keyed_dropout_apply_keeping_bits(x, p, key).second;
    const torch::Tensor mask = model::keyed_dropout_mask_like(x, p, key);
    const double torch_forward = seconds_per_call([&] { (void)torch::dropout(x, p, true); }, min_seconds);
    const double product = seconds_per_call([&] { (void)(x * mask); }, min_seconds);
    for (const auto isa : model::mask_isas()) {  // every path this CPU has, the widest first
      model::cap_mask_isa(isa);
      const double forward = seconds_per_call([&] { (void)model::keyed_dropout_apply_keeping_bits(x, p, key); },
                                              min_seconds);
      const double backward = seconds_per_call([&] { (void)model::keyed_dropout_apply_bits(x, bits, p); },
                                               min_seconds);
      fmt::print("{:<14} {:>10.1f} {:>15.1f} {:>6.2f} {:>10.1f} {:>10.1f} {:>6.2f}\n",
                 fmt::format("{}, {}", dtype == torch::kFloat ? "fp32" : "bf16", model::to_string(isa)), 1e3 * forward,
                 1e3 * torch_forward, forward / torch_forward, 1e3 * backward, 1e3 * product, backward / product);
    }
    model::cap_mask_isa(model::MaskIsa::Avx512);
  }
}

}  // namespace ragmig::bench
