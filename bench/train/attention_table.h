// bench/train's attention-probabilities table: dropout(softmax(scores + bias)) . v as CPU training runs it
// (model/attention_probs.h), the fused path (bias, softmax and keyed dropout in one pass; the mask inside softmax's
// backward) beside the composite of LibTorch's ops with the same masks, on one layer's tensors of the MiniLM SQuAD
// rows (batch 32, 12 heads of 32, passages of 256 tokens, a quarter of them padding in half the batch), p = 0.1:
// the forward (building the graph) and forward + backward, in ms per call.
#pragma once

#include <fmt/format.h>
#include <torch/torch.h>

#include "common/bench_support.h"
#include "model/attention_probs.h"
#include "model/softmax_dropout_kernels.h"

namespace ragmig::bench {

inline void print_attention_table(double min_seconds) {
  const double p = 0.1;
  const int64_t b = 32, heads = 12, l = 256, d = 32;
  fmt::print("\nAttention probabilities {}x{}x{}x{} (bias, softmax, dropout p = {}, times v), ms per call, {} threads",
             b, heads, l, l, p, at::get_num_threads());
  if (!model::softmax_dropout_vectorised()) {
    fmt::print(": no AVX-512 here, the composite is all there is\n");
    return;
  }
  fmt::print(":\n{:<6} {:>10} {:>10} {:>6} {:>14} {:>14} {:>6}\n", "dtype", "fused fwd", "composite", "ratio",
             "fused fwd+bwd", "composite", "ratio");
  torch::Tensor bias = torch::zeros({b, 1, 1, l});
  bias.narrow(0, 0, b / 2).narrow(-1, 3 * l / 4, l / 4).fill_(-3.3895313892515355e38);
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    const torch::Tensor scores = (torch::randn({b, heads, l, l}) * 3).to(dtype).requires_grad_(true);
    const torch::Tensor v = torch::randn({b, heads, l, d}).to(dtype).requires_grad_(true);
    const torch::Tensor grad = torch::randn({b, heads, l, d}).to(dtype), typed_bias = bias.to(dtype);
    auto time = [&](auto attend, bool backward) {
      return seconds_per_call(
          [&] {
            scores.mutable_grad() = torch::Tensor();  // not accumulated: each call's own
            v.mutable_grad() = torch::Tensor();
            const torch::Tensor out = attend(scores, typed_bias, v, p, true);
            if (backward) out.backward(grad);
          },
          min_seconds);
    };
    const double fused = time(model::attention_probs_matmul, false);
    const double composite = time(model::attention_probs_matmul_composite, false);
    const double fused_both = time(model::attention_probs_matmul, true);
    const double composite_both = time(model::attention_probs_matmul_composite, true);
    fmt::print("{:<6} {:>10.1f} {:>10.1f} {:>6.2f} {:>14.1f} {:>14.1f} {:>6.2f}\n",
               dtype == torch::kFloat ? "fp32" : "bf16", 1e3 * fused, 1e3 * composite, fused / composite,
               1e3 * fused_both, 1e3 * composite_both, fused_both / composite_both);
  }
}

// The whole attention from q, k, v as BERT's projection lays them out ([B, L, 3 x heads x d]): blocked_attention
// (a few batch rows at a time) beside the plain path it replaced (the scores' product over the whole batch, then
// attention_probs_matmul), the same tensors and masks, in ms per call; the gradient goes to the projection.
inline void print_blocked_attention_table(double min_seconds) {
  const double p = 0.1;
  const int64_t b = 32, heads = 12, d = 32;
  fmt::print("\nAttention from q, k, v [{}, L, 3x{}x{}] (scores, bias, softmax, dropout p = {}, times v), blocked "
             "beside the whole batch at once, ms per call, {} threads",
             b, heads, d, p, at::get_num_threads());
  if (!model::softmax_dropout_vectorised()) {
    fmt::print(": no AVX-512 here, the plain path is all there is\n");
    return;
  }
  fmt::print(":\n{:<6} {:>4} {:>5} {:>10} {:>10} {:>6} {:>14} {:>14} {:>6}\n", "dtype", "L", "rows", "blocked fwd",
             "whole", "ratio", "blocked fwd+bwd", "whole", "ratio");
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    for (const int64_t l : {int64_t{128}, int64_t{256}}) {
      torch::Tensor bias = torch::zeros({b, 1, 1, l});
      bias.narrow(0, 0, b / 2).narrow(-1, 3 * l / 4, l / 4).fill_(-3.3895313892515355e38);
      bias = bias.to(dtype);
      const torch::Tensor projection = torch::randn({b, l, 3 * heads * d}).to(dtype).requires_grad_(true);
      const torch::Tensor grad = torch::randn({b, l, heads * d}).to(dtype);
      const double scale = 1.0 / std::sqrt(static_cast<double>(d));
      auto time = [&](bool blocked, bool backward) {
        return seconds_per_call(
            [&] {
              projection.mutable_grad() = torch::Tensor();
              const auto parts = projection.chunk(3, -1);
              auto split = [&](const torch::Tensor& t) { return t.view({b, l, heads, d}).transpose(1, 2); };
              const torch::Tensor q = split(parts[0]), k = split(parts[1]), v = split(parts[2]);
              const torch::Tensor context =
                  blocked ? model::blocked_attention(q, k, v, bias, scale, p, true)
                          : model::attention_probs_matmul(torch::matmul(q * scale, k.transpose(-1, -2)), bias, v, p,
                                                          true);
              const torch::Tensor out = context.transpose(1, 2).contiguous().view({b, l, heads * d});
              if (backward) out.backward(grad);
            },
            min_seconds);
      };
      const double blocked = time(true, false), whole = time(false, false);
      const double blocked_both = time(true, true), whole_both = time(false, true);
      fmt::print("{:<6} {:>4} {:>5} {:>10.1f} {:>10.1f} {:>6.2f} {:>14.1f} {:>14.1f} {:>6.2f}\n",
                 dtype == torch::kFloat ? "fp32" : "bf16", l,
                 model::blocked_attention_rows(b, heads, l, l, dtype == torch::kFloat ? 4 : 2), 1e3 * blocked,
                 1e3 * whole, blocked / whole, 1e3 * blocked_both, 1e3 * whole_both, blocked_both / whole_both);
    }
  }
}

}  // namespace ragmig::bench
