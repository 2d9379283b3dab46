// InfoNCE for dual encoders: every query's positive against all in-batch positives and hard negatives, and the
// terms sentence-transformers adds to it (the symmetric loss, query-query and passage-passage negatives, hardness).
// Shapes: B queries, D embedding size, N = number of negative passages shared by the whole batch.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "train/train_config.h"

namespace ragmig::train {

/// Mean over queries of -log softmax(scale * q·[p; negs]ᵀ)[i, i]. q [B,D], p [B,D] (row i is query i's
/// positive), negs [N,D] or an undefined tensor, scale a 0-d tensor (1/temperature). Computed in float32, or float64 for float64 inputs.
torch::Tensor info_nce_loss(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                            const torch::Tensor& scale);

/// Which similarities compete with each query's positive, as sentence-transformers' MultipleNegativesRankingLoss
/// (6.x: directions, partition_mode, hardness_mode) has them. Defaults: InfoNCE itself.
struct LossTerms {
  bool doc_to_query = false;    ///< each positive against every query (the symmetric loss)
  bool query_to_query = false;  ///< each query against the other queries
  bool doc_to_doc = false;      ///< each positive against the passages of the other queries
  bool per_direction = false;   ///< one softmax per direction, averaged (else one joint softmax over all of them)
  /// Hardness weighting (Lan et al. 2025): alpha x stop_grad(q·d) added to the scaled query-to-passage logits of
  /// "in_batch_negatives" (other queries' passages), "hard_negatives" (the query's own) or "all_negatives".
  std::string hardness_mode = "none";
  double hardness_strength = 0;
  bool infonce() const {
    return !doc_to_query && !query_to_query && !doc_to_doc && (hardness_mode == "none" || hardness_strength == 0);
  }
};

/// train.loss_directions, loss_partition and hardness_* (as validate() accepts them) as the loss takes them.
LossTerms loss_terms(const TrainOptions& options);

/// The loss of a training step: its terms and, for Matryoshka representation learning (Kusupati et al., 2022;
/// sentence-transformers' MatryoshkaLoss), the leading sizes it is summed over, so that a prefix of each vector
/// retrieves by itself and an index can keep fewer dimensions.
struct LossSpec {
  std::vector<int64_t> dims;  ///< prefix sizes, each <= D; none = the loss of the whole embeddings
  bool renormalize = true;    ///< L2-normalise each prefix (the model normalises: cosine at every size)
  LossTerms terms{};
};

/// -mean_i log(exp(s_ii) / Z_i) with s = scale x q·d the query-to-passage logits and Z_i summed over the terms'
/// directions (or the mean of each direction's log-sum-exp with per_direction); for default terms, info_nce_loss.
/// negs [N,D] are the queries' hard negatives, N/B per query, query i's first (rows i*N/B ...): the passages that
/// doc_to_doc leaves out for positive i and that hardness weighting tells apart from in-batch negatives.
torch::Tensor multiple_negatives_loss(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                                      const torch::Tensor& scale, const LossTerms& terms);

/// The first `d` dimensions of embeddings [B,D], L2-normalised again when `renormalize` (a model that normalises
/// compares its prefixes by cosine): what each Matryoshka size trains, and what evaluation at that size searches.
torch::Tensor matryoshka_prefix(const torch::Tensor& e, int64_t d, bool renormalize);

/// multiple_negatives_loss of the whole embeddings without `spec.dims`; with them, the sum over each size d of
/// the loss of the first d dimensions (renormalised if spec.renormalize), every size weighted 1 as
/// sentence-transformers' default.
torch::Tensor contrastive_loss(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                               const torch::Tensor& scale, const LossSpec& spec);

/// The same loss written row by row with an explicit log-sum-exp: the reference for info_nce_loss.
torch::Tensor info_nce_loss_reference(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                                      const torch::Tensor& scale);

}  // namespace ragmig::train
