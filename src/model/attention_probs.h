// Attention's probabilities applied to the values, as the plain attention path computes them (CPU training with
// dropout on the probabilities, `attention = "plain"`): dropout(softmax(scores + bias)) . v.
//
// On a CPU with AVX-512 the bias, softmax and keyed dropout's mask (model/keyed_dropout.h, the same masks from the
// same draws) are one pass over the scores (model/softmax_dropout_kernels.h), and with a gradient to carry one graph
// node that keeps what the composite's nodes kept (the probabilities, v, the mask's bits), and whose backward applies
// the mask inside softmax's backward, in place over the gradient, remaking the dropped probabilities for v's gradient
// on the way. LibTorch's ops take six passes over these [batch, heads, L, L] tensors, each over tens of MB at
// training sizes: forward the bias, softmax and the mask; backward the mask, softmax's backward and the dropped
// probabilities again. Elsewhere (other CPUs, CUDA, other dtypes) the composite.
//
// blocked_attention runs the whole path from q and k the same way, a few batch rows at a time: each block's scores,
// probabilities and their gradient ([rows, heads, L, L], about 1 MB) stay in a core's cache from the product that
// makes them through the loops to the products that read them, and q, k, v are read where the projection wrote them
// ([B, L, heads, d]) without copies of the whole of them into [B, heads, L, d].
#pragma once

#include <torch/torch.h>

namespace ragmig::model {

/// keyed_dropout_matmul(softmax(scores + bias, -1), v, p, training), the softmax in float and rounded to scores'
/// dtype. `bias` broadcasts to scores (undefined: none); its gradient flows where it requires one (MPNet's learned
/// position bias). The fused path and the composite differ by rounding only (the sum scores + bias is not rounded
/// to bf16 before softmax; the exponentials are a polynomial's); the composite may overwrite scores (below).
torch::Tensor attention_probs_matmul(const torch::Tensor& scores, const torch::Tensor& bias, const torch::Tensor& v,
                                     double p, bool training);

/// The composite of LibTorch's ops attention_probs_matmul runs where the fused path does not (tests compare them).
/// It adds the bias into `scores` in place unless scores is a leaf of the graph (callers hand it a product's output).
torch::Tensor attention_probs_matmul_composite(const torch::Tensor& scores, const torch::Tensor& bias,
                                               const torch::Tensor& v, double p, bool training);

/// Whether blocked_attention takes these: a CPU that runs the fused loops, q, k, v [B, heads, L, d] of one dtype
/// (fp32 or bf16; k's and v's lengths equal), a bias (of that dtype, or undefined) that broadcasts to [B, heads, Lq,
/// Lk], or is of that whole shape where it needs a gradient (MPNet's learned position bias plus the padding's).
bool blocked_attention_takes(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& bias);

/// attention_probs_matmul(q k^T * scale, bias, v, p, training) from q, k, v [B, heads, L, d] of any strides, as
/// [B, heads, Lq, d] laid out as [B, Lq, heads, d] (its transpose(1, 2) is contiguous): the same masks (one key
/// over the whole [B, heads, Lq, Lk], drawn as attention_probs_matmul draws it), the same products per batch row.
/// Gradients for q, k and v, laid out as the output, and for the bias where it needs one. Needs
/// blocked_attention_takes.
torch::Tensor blocked_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                const torch::Tensor& bias, double scale, double p, bool training);

/// How many batch rows blocked_attention takes at a time for these sizes (a multiple that starts every block on a
/// byte of the mask's bits).
int64_t blocked_attention_rows(int64_t batch, int64_t heads, int64_t lq, int64_t lk, int64_t element_size);

}  // namespace ragmig::model
