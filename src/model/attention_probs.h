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

}  // namespace ragmig::model
