// dropout(softmax(scores + bias)) . v (see attention_probs.h).
#include "model/attention_probs.h"

#include <ATen/ExpandUtils.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "model/cpu_parallel.h"
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

// Keyed dropout's keep bits for n elements (model/keyed_dropout_kernels.h).
torch::Tensor keep_bits(int64_t n, double p, uint64_t key) {
  torch::Tensor bits = torch::empty({(n + 7) / 8}, torch::kUInt8);
  fill_keep_bits(n, p, key, bits.data_ptr<uint8_t>());
  return bits;
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
    out.bits = keep_bits(scores.numel(), p, key);
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

namespace {

// Each block's [rows, heads, Lq, Lk] scores in about this many bytes, a thread's blocks one after another: on the
// 2-core Xeon this was measured on (2 MB of L2 a core), 0.5-2 MB ran alike, whole batches on all threads at once up
// to 1.6x slower (bench_train --attention).
constexpr int64_t kBlockBytes = int64_t{1} << 20;

// The [B, heads, L, d] tensor's rows [begin, begin + rows), contiguous (q's scaled on the way: one pass).
torch::Tensor block_of(const torch::Tensor& x, int64_t begin, int64_t rows, double scale = 1.0) {
  const torch::Tensor part = x.narrow(0, begin, rows);
  if (scale == 1.0) return part.contiguous();
  torch::Tensor out = torch::empty(part.sizes(), part.options());
  at::mul_out(out, part, scale);
  return out;
}

// A [B, heads, L, d] result laid out as [B, L, heads, d].
torch::Tensor heads_inside(const torch::Tensor& like) {
  return torch::empty({like.size(0), like.size(2), like.size(1), like.size(3)}, like.options()).transpose(1, 2);
}

// [rows, heads, L, n] as the [rows * heads, L, n] batch of matrices bmm takes (contiguous: a view).
torch::Tensor matrices(const torch::Tensor& x) { return x.view({-1, x.size(-2), x.size(-1)}); }

// The blocks' shared sizes and the mask's bits (p > 0: keep_bits over the whole [B, heads, Lq, Lk]).
struct Blocks {
  int64_t batch, heads, lq, lk, rows_per_block;
  double scale, p;
  torch::Tensor bits;

  Blocks(const torch::Tensor& q, const torch::Tensor& k, double scale_in, double p_in, torch::Tensor bits_in)
      : batch(q.size(0)), heads(q.size(1)), lq(q.size(2)), lk(k.size(2)),
        rows_per_block(blocked_attention_rows(batch, heads, lq, lk, q.element_size())), scale(scale_in), p(p_in),
        bits(std::move(bits_in)) {}
  // With the bits drawn for `key` (none when p = 0).
  static Blocks drawn(const torch::Tensor& q, const torch::Tensor& k, double scale, double p, uint64_t key) {
    const int64_t n = q.size(0) * q.size(1) * q.size(2) * k.size(2);
    return Blocks(q, k, scale, p, p > 0 ? keep_bits(n, p, key) : torch::Tensor());
  }
  int64_t per_row() const { return heads * lq * lk; }
  const uint8_t* bits_from(int64_t row) const {  // blocks start on a byte (blocked_attention_rows)
    return p > 0 ? bits.data_ptr<uint8_t>() + row * per_row() / 8 : nullptr;
  }
  torch::Tensor bias_of(const torch::Tensor& bias, int64_t begin, int64_t rows) const {
    return !bias.defined() || bias.dim() < 4 || bias.size(0) == 1 ? bias : bias.narrow(0, begin, rows);
  }
  // Two buffers of a block's [rows * heads, Lq, Lk] (`like`'s dtype), made on first use, each thread its own.
  struct Scratch {
    torch::Tensor first, second;
  };
  // The first `rows` rows' part of `buffer`.
  torch::Tensor block(torch::Tensor& buffer, const torch::Tensor& like, int64_t rows) const {
    if (!buffer.defined()) buffer = torch::empty({rows_per_block * heads, lq, lk}, like.options());
    return buffer.narrow(0, 0, rows * heads);
  }
  // [rows * heads, a, b] as [rows, heads, a, b].
  torch::Tensor shaped(const torch::Tensor& matrices, int64_t rows) const {
    return matrices.view({rows, heads, matrices.size(1), matrices.size(2)});
  }
  // fn(begin, rows, scratch) for every block. The blocks are shared out among LibTorch's threads, each running its
  // own one after another with its own scratch (a block's tensors stay in that core's cache): one parallel region
  // for them all, where a block a time on all threads would wake the threads for every operation of every block
  // (ragmig's OpenMP threads sleep when idle: core/cpu_threads.h). Autograd and autocast are off in the threads.
  template <typename F>
  void for_each(const F& fn) const {
    const int64_t count = (batch + rows_per_block - 1) / rows_per_block;
    const auto run = [&](int64_t first, int64_t last) {
      const at::AutoDispatchBelowADInplaceOrView no_autograd;
      const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
      Scratch scratch;
      for (int64_t i = first; i < last; ++i) {
        const int64_t begin = i * rows_per_block;
        fn(begin, std::min(rows_per_block, batch - begin), scratch);
      }
    };
    parallel_ranges(count, run);
  }
};

// The forward: the output, and the probabilities of every block into `probs` when it is defined.
torch::Tensor blocked_forward(const Blocks& blocks, const torch::Tensor& q, const torch::Tensor& k,
                              const torch::Tensor& v, const torch::Tensor& bias, const torch::Tensor& probs) {
  torch::Tensor out = heads_inside(q);
  const bool mask = blocks.p > 0;
  blocks.for_each([&](int64_t begin, int64_t rows, Blocks::Scratch& scratch) {
    torch::Tensor scores = blocks.block(scratch.first, q, rows);
    const torch::Tensor dropped = mask || !probs.defined() ? blocks.block(scratch.second, q, rows) : torch::Tensor();
    at::bmm_out(scores, matrices(block_of(q, begin, rows, blocks.scale)), matrices(block_of(k, begin, rows)).mT());
    // Without `probs` (no graph) the probabilities go to `dropped` when there is no mask.
    const torch::Tensor probs_b = probs.defined() ? matrices(probs.narrow(0, begin, rows)) : torch::Tensor();
    const torch::Tensor bias_b = blocks.bias_of(bias, begin, rows);
    for_dtype(scores, [&](auto tag) {
      using T = decltype(tag);
      softmax_dropout_rows<T>(scores.data_ptr<T>(), row_bias<T>(bias_b, blocks.shaped(scores, rows)),
                              rows * blocks.heads * blocks.lq, blocks.lk, blocks.bits_from(begin),
                              keep_scale<T>(blocks.p),
                              probs_b.defined() ? probs_b.data_ptr<T>() : (mask ? nullptr : dropped.data_ptr<T>()),
                              mask ? dropped.data_ptr<T>() : nullptr);
    });
    const torch::Tensor& used = mask || !probs_b.defined() ? dropped : probs_b;
    out.narrow(0, begin, rows).copy_(blocks.shaped(at::bmm(used, matrices(block_of(v, begin, rows))), rows));
  });
  return out;
}

// One graph node over the whole attention: keeps q, k, v, the probabilities and the mask's bits (what the plain
// path's nodes kept, less the copies of q, k, v), and in backward runs the blocks again: per block the gradient's
// products with v, the masked softmax backward in place, and the products for v, q and k, in cache.
struct BlockedAttentionFunction : public torch::autograd::Function<BlockedAttentionFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const c10::optional<torch::Tensor>& bias, double scale,
                               double p, int64_t key) {
    const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const Blocks blocks = Blocks::drawn(q, k, scale, p, static_cast<uint64_t>(key));
    const torch::Tensor probs = torch::empty({blocks.batch, blocks.heads, blocks.lq, blocks.lk}, q.options());
    torch::Tensor out = blocked_forward(blocks, q, k, v, bias.value_or(torch::Tensor()), probs);
    ctx->save_for_backward({q, k, v, probs});
    ctx->saved_data["bias_grad"] = bias && bias->requires_grad();
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["dropout_p"] = p;
    if (p > 0) ctx->saved_data["dropout_bits"] = blocks.bits;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3];
    const torch::Tensor g = grads[0].to(q.scalar_type());
    const double p = ctx->saved_data["dropout_p"].toDouble();
    const Blocks blocks(q, k, ctx->saved_data["scale"].toDouble(), p,
                        p > 0 ? ctx->saved_data["dropout_bits"].toTensor() : torch::Tensor());
    torch::Tensor grad_q = heads_inside(q), grad_k = heads_inside(k), grad_v = heads_inside(v), grad_bias;
    // The bias's gradient (MPNet's learned position bias, summed into it by the graph) is the scores' own.
    if (ctx->saved_data["bias_grad"].toBool() && ctx->needs_input_grad(3)) grad_bias = torch::empty_like(probs);
    blocks.for_each([&](int64_t begin, int64_t rows, Blocks::Scratch& scratch) {
      torch::Tensor grad_scores = blocks.block(scratch.first, q, rows), grad_q_b = grad_q.narrow(0, begin, rows);
      const torch::Tensor probs_b = matrices(probs.narrow(0, begin, rows));
      const torch::Tensor dropped = blocks.p > 0 ? blocks.block(scratch.second, q, rows) : probs_b;
      const torch::Tensor gb = matrices(block_of(g, begin, rows));
      at::bmm_out(grad_scores, gb, matrices(block_of(v, begin, rows)).mT());
      for_dtype(probs, [&](auto tag) {
        using T = decltype(tag);
        softmax_dropout_backward_rows<T>(grad_scores.data_ptr<T>(), probs_b.data_ptr<T>(),
                                         rows * blocks.heads * blocks.lq, blocks.lk, blocks.bits_from(begin),
                                         keep_scale<T>(blocks.p), blocks.p > 0 ? dropped.data_ptr<T>() : nullptr);
      });
      if (grad_bias.defined()) grad_bias.narrow(0, begin, rows).copy_(blocks.shaped(grad_scores, rows));
      // v's and k's gradients as the transposes of (g^T dropped) and (q^T grad_scores): bmm takes a transposed
      // operand only as a copy (bf16), and [L, d] copies cost less than [L, L] ones.
      grad_v.narrow(0, begin, rows).copy_(blocks.shaped(at::bmm(gb.mT(), dropped), rows).mT());
      at::mul_out(grad_q_b,
                  blocks.shaped(at::bmm(grad_scores, matrices(block_of(k, begin, rows))), rows), blocks.scale);
      grad_k.narrow(0, begin, rows)
          .copy_(blocks.shaped(at::bmm(matrices(block_of(q, begin, rows, blocks.scale)).mT(), grad_scores), rows).mT());
    });
    return {grad_q, grad_k, grad_v, grad_bias, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

int64_t blocked_attention_rows(int64_t batch, int64_t heads, int64_t lq, int64_t lk, int64_t element_size) {
  const int64_t per_row = heads * lq * lk;
  const int64_t align = 8 / std::gcd(per_row, int64_t{8});  // rows whose elements fill whole bytes of the bits
  const int64_t rows = std::max<int64_t>(1, kBlockBytes / std::max<int64_t>(1, per_row * element_size));
  return std::min(batch, std::max(align, rows / align * align));
}

bool blocked_attention_takes(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& bias) {
  if (!q.device().is_cpu() || !softmax_dropout_vectorised()) return false;
  const auto dtype = q.scalar_type();
  if (dtype != torch::kFloat && dtype != torch::kBFloat16) return false;
  if (k.scalar_type() != dtype || v.scalar_type() != dtype || !k.device().is_cpu() || !v.device().is_cpu())
    return false;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || q.numel() == 0 || k.numel() == 0) return false;
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != q.size(1) || v.size(1) != q.size(1) ||
      k.size(3) != q.size(3) || v.size(2) != k.size(2))
    return false;
  if (!bias.defined()) return true;
  if (bias.scalar_type() != dtype || !bias.device().is_cpu() || bias.dim() > 4) return false;
  const std::vector<int64_t> scores = {q.size(0), q.size(1), q.size(2), k.size(2)};
  if (bias.requires_grad()) return bias.sizes() == c10::IntArrayRef(scores);  // its gradient: the scores' own
  for (int64_t d = 1; d <= bias.dim(); ++d) {
    const int64_t b = bias.size(-d), s = scores[4 - d];
    if (b != s && (b != 1 || d == 1)) return false;  // the last dimension whole (the loops read rows of n)
  }
  return true;
}

torch::Tensor blocked_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                const torch::Tensor& bias, double scale, double p, bool training) {
  const double rate = training ? p : 0.0;
  const uint64_t key = rate > 0 ? keyed_dropout_key() : 0;
  const torch::Tensor b = bias.defined() ? bias.contiguous() : bias;
  if (torch::GradMode::is_enabled() &&
      (q.requires_grad() || k.requires_grad() || v.requires_grad() || (b.defined() && b.requires_grad()))) {
    const c10::optional<torch::Tensor> optional_bias = b.defined() ? c10::optional<torch::Tensor>(b) : c10::nullopt;
    return BlockedAttentionFunction::apply(q, k, v, optional_bias, scale, rate, static_cast<int64_t>(key));
  }
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  return blocked_forward(Blocks::drawn(q, k, scale, rate, key), q, k, v, b, torch::Tensor());
}

}  // namespace ragmig::model
