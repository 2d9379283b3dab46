// InfoNCE for dual encoders: every query's positive against all in-batch positives and hard negatives.
// Shapes: B queries, D embedding size, N = number of negative passages shared by the whole batch.
#pragma once

#include <torch/torch.h>

namespace ragmig::train {

/// Mean over queries of -log softmax(scale * q·[p; negs]ᵀ)[i, i]. q [B,D], p [B,D] (row i is query i's
/// positive), negs [N,D] or an undefined tensor, scale a 0-d tensor (1/temperature). Computed in float32, or float64 for float64 inputs.
torch::Tensor info_nce_loss(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                            const torch::Tensor& scale);

/// The same loss written row by row with an explicit log-sum-exp: the reference for info_nce_loss.
torch::Tensor info_nce_loss_reference(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                                      const torch::Tensor& scale);

}  // namespace ragmig::train
