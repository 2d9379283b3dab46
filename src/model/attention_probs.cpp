// dropout(softmax(scores + bias)) . v (see attention_probs.h).
#include "model/attention_probs.h"

#include <ATen/ExpandUtils.h>

#include <vector>

#include "model/keyed_dropout.h"
#include "model/keyed_dropout_kernels.h"
#include "model/softmax_dropout_kernels.h"

namespace ragmig::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Whether the fused loops take these: a CPU with them, fp32 or bf16 scores of at most five dimensions, a bias (of
// the scores' dtype) that broadcasts to them along all but its last dimension.
bool fusable(const torch::Tensor& scores, const torch::Tensor& bias) {
  if (!scores.device().is_cpu() || !softmax_dropout_vectorised()) return false;
  if (scores.scalar_type() != torch::kFloat && scores.scalar_type() != torch::kBFloat16) return false;
  if (scores.dim() < 1 || scores.dim() > 5 || scores.numel() == 0) return false;
  return !bias.defined() || (bias.device().is_cpu() && bias.dim() >= 1 && bias.dim() <= scores.dim() &&
                             bias.size(-1) == scores.size(-1));
}

// The rows' bias for the kernels: bias (contiguous, so its rows are) broadcast to scores.
template <typename T>
RowBias<T> row_bias(const torch::Tensor& bias, const torch::Tensor& scores) {
  RowBias<T> rows;
  if (!bias.defined()) return rows;
  const torch::Tensor expanded = bias.expand(scores.sizes());
  const int64_t lead = scores.dim() - 1;
  for (int64_t d = 0; d < lead; ++d) {
    rows.sizes[4 - lead + d] = scores.size(d);
    rows.strides[4 - lead + d] = expanded.stride(d);
  }
  rows.data = expanded.data_ptr<T>();
  return rows;
}

// fn(T{}) for scores' dtype (fusable's).
template <typename F>
void for_dtype(const torch::Tensor& x, const F& fn) {
  if (x.scalar_type() == torch::kFloat)
    fn(float{});
  else
    fn(c10::BFloat16{});
}

struct Probabilities {
  torch::Tensor probs;    // softmax(scores + bias); undefined when not asked for (and p > 0)
  torch::Tensor dropped;  // probs x mask (probs itself when p = 0)
  torch::Tensor bits;     // the mask's bits (p > 0)
};

// The forward loops; `bias` contiguous, of scores' dtype.
Probabilities softmax_dropout(const torch::Tensor& scores_in, const torch::Tensor& bias, double p, uint64_t key,
                              bool keep_probs) {
  const torch::Tensor scores = scores_in.contiguous();
  const int64_t n = scores.size(-1), rows = scores.numel() / n;
  Probabilities out;
  if (p > 0) {
    out.bits = torch::empty({(scores.numel() + 7) / 8}, torch::kUInt8);
    fill_keep_bits(scores.numel(), p, key, out.bits.data_ptr<uint8_t>());
    out.dropped = torch::empty_like(scores);
  }
  if (keep_probs || p == 0) out.probs = torch::empty_like(scores);
  if (p == 0) out.dropped = out.probs;
  for_dtype(scores, [&](auto tag) {
    using T = decltype(tag);
    softmax_dropout_rows<T>(scores.data_ptr<T>(), row_bias<T>(bias, scores), rows, n,
                            p > 0 ? out.bits.data_ptr<uint8_t>() : nullptr, keep_scale<T>(p),
                            out.probs.defined() ? out.probs.data_ptr<T>() : nullptr,
                            p > 0 ? out.dropped.data_ptr<T>() : nullptr);
  });
  return out;
}

// One graph node: keeps the probabilities, v and the mask's bits (keyed_dropout_saving_bits' keys in saved_data),
// as the composite's softmax and keyed_dropout_matmul nodes kept them. Under autocast the product runs in the
// autocast dtype, and backward computes its two products in the gradient's, as keyed_dropout_matmul's node. The bias
// comes last and optional: needs_input_grad counts the inputs that are there.
struct AttentionProbsFunction : public torch::autograd::Function<AttentionProbsFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& scores, const torch::Tensor& v,
                               const c10::optional<torch::Tensor>& bias, double p, int64_t key) {
    Probabilities out = softmax_dropout(scores, bias.value_or(torch::Tensor()), p, static_cast<uint64_t>(key), true);
    ctx->save_for_backward({out.probs, v});
    ctx->saved_data["dropout_p"] = p;
    if (p > 0) ctx->saved_data["dropout_bits"] = out.bits;
    if (bias) ctx->saved_data["bias_sizes"] = bias->sizes().vec();
    return torch::matmul(out.dropped, v);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &probs = saved[0], &v = saved[1];
    const torch::Tensor& g = grads[0];
    const double p = ctx->saved_data["dropout_p"].toDouble();
    const bool bias_grad = ctx->saved_data.count("bias_sizes") && ctx->needs_input_grad(2);
    torch::Tensor grad_scores, grad_bias, grad_v, dropped = p > 0 ? torch::Tensor() : probs;
    if (ctx->needs_input_grad(0) || bias_grad) {
      grad_scores = torch::matmul(g, v.to(g.scalar_type()).transpose(-1, -2)).to(probs.scalar_type()).contiguous();
      if (p > 0 && ctx->needs_input_grad(1)) dropped = torch::empty_like(probs);  // made on the way
      const int64_t n = probs.size(-1);
      const uint8_t* bits = p > 0 ? ctx->saved_data["dropout_bits"].toTensor().data_ptr<uint8_t>() : nullptr;
      for_dtype(probs, [&](auto tag) {
        using T = decltype(tag);
        T* dropped_out = p > 0 && dropped.defined() ? dropped.data_ptr<T>() : nullptr;
        softmax_dropout_backward_rows<T>(grad_scores.data_ptr<T>(), probs.data_ptr<T>(), probs.numel() / n, n, bits,
                                         keep_scale<T>(p), dropped_out);
      });
      if (bias_grad) grad_bias = at::sum_to(grad_scores, ctx->saved_data["bias_sizes"].toIntVector());
      if (!ctx->needs_input_grad(0)) grad_scores = torch::Tensor();
    }
    if (ctx->needs_input_grad(1)) {
      if (!dropped.defined()) dropped = keyed_dropout_saved(ctx, probs);
      grad_v = torch::matmul(dropped.to(g.scalar_type()).transpose(-1, -2), g).to(v.scalar_type());
    }
    return {grad_scores, grad_v, grad_bias, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor attention_probs_matmul_composite(const torch::Tensor& scores, const torch::Tensor& bias,
                                               const torch::Tensor& v, double p, bool training) {
  // The bias goes in place where the graph allows it (a product's output: its node keeps its inputs, not it), as
  // before this function existed: one [B, heads, L, L] buffer less at the peak.
  torch::Tensor biased = scores;
  if (bias.defined()) biased = scores.is_leaf() && scores.requires_grad() ? scores + bias : scores.add_(bias);
  // LibTorch's softmax of a bf16 or half tensor computes in float and rounds once, as the fused loops.
  return keyed_dropout_matmul(torch::softmax(biased, -1), v, p, training);
}

torch::Tensor attention_probs_matmul(const torch::Tensor& scores, const torch::Tensor& bias, const torch::Tensor& v,
                                     double p, bool training) {
  const torch::Tensor b = bias.defined() ? bias.to(scores.scalar_type()).contiguous() : bias;
  if (!fusable(scores, b)) return attention_probs_matmul_composite(scores, bias, v, p, training);
  const double rate = training ? p : 0.0;
  const uint64_t key = rate > 0 ? keyed_dropout_key() : 0;
  const bool graph = torch::GradMode::is_enabled() &&
                     (scores.requires_grad() || v.requires_grad() || (b.defined() && b.requires_grad()));
  if (graph) {
    const c10::optional<torch::Tensor> optional_bias = b.defined() ? c10::optional<torch::Tensor>(b) : c10::nullopt;
    return AttentionProbsFunction::apply(scores, v, optional_bias, rate, static_cast<int64_t>(key));
  }
  return torch::matmul(softmax_dropout(scores, b, rate, key, false).dropped, v);
}

}  // namespace ragmig::model
