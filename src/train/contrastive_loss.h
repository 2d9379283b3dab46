// InfoNCE for dual encoders: every query's positive against all in-batch positives and hard negatives.
// Shapes: B queries, D embedding size, N = number of negative passages shared by the whole batch.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace ragmig::train {

/// Mean over queries of -log softmax(scale * q·[p; negs]ᵀ)[i, i]. q [B,D], p [B,D] (row i is query i's
/// positive), negs [N,D] or an undefined tensor, scale a 0-d tensor (1/temperature). Computed in float32, or float64 for float64 inputs.
torch::Tensor info_nce_loss(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                            const torch::Tensor& scale);

/// Matryoshka representation learning (Kusupati et al., 2022; sentence-transformers' MatryoshkaLoss): the
/// loss is summed over the leading `dims` dimensions of every embedding, so that a prefix of each vector
/// retrieves by itself and an index can keep fewer dimensions.
struct MatryoshkaLoss {
  std::vector<int64_t> dims;  ///< prefix sizes, each <= D; none = InfoNCE on the whole embeddings
  bool renormalize = true;    ///< L2-normalise each prefix (the model normalises: cosine at every size)
};

/// The first `d` dimensions of embeddings [B,D], L2-normalised again when `renormalize` (a model that normalises
/// compares its prefixes by cosine): what each Matryoshka size trains, and what evaluation at that size searches.
torch::Tensor matryoshka_prefix(const torch::Tensor& e, int64_t d, bool renormalize);

/// info_nce_loss of the whole embeddings without `matryoshka.dims`; with them, the sum over each size d of
/// info_nce_loss of the first d dimensions (renormalised if matryoshka.renormalize), every size weighted 1 as
/// sentence-transformers' default.
torch::Tensor contrastive_loss(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                               const torch::Tensor& scale, const MatryoshkaLoss& matryoshka);

/// The same loss written row by row with an explicit log-sum-exp: the reference for info_nce_loss.
torch::Tensor info_nce_loss_reference(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                                      const torch::Tensor& scale);

}  // namespace ragmig::train
