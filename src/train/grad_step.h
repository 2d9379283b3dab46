// The three ways a step turns one batch into parameter gradients:
//  - full:      one forward of the whole batch, one backward;
//  - plain:     micro-batches, each with its own loss (negatives only from its micro-batch), grads summed;
//  - gradcache: embed the whole batch in chunks without a graph, take the full-batch loss on the cached
//               embeddings, then re-embed chunk by chunk with a graph and back-propagate the cached embedding
//               gradients (Gao et al., 2021). Same gradients as `full`, memory of one chunk (of queries and of
//               passages: one encoder call embeds both).
// B = queries per batch, H = hard negatives per query; passages are B positives then B*H negatives,
// query i's negatives at rows B + i*H .. B + (i+1)*H - 1.
#pragma once

#include <torch/torch.h>

#include <utility>

#include "train/contrastive_loss.h"
#include "train/tower_encoder.h"

namespace ragmig::train {

/// The ids on the training device; the masks may stay on the host (assemble_batch leaves them there, pinned for a
/// GPU), where the towers read them without waiting for the device.
struct PairBatch {
  torch::Tensor q_ids, q_mask;  ///< [B, Lq]
  torch::Tensor p_ids, p_mask;  ///< [B*(1+H), Lp]
  int64_t hard_negatives = 0;   ///< H
  int64_t real_tokens = 0;      ///< the masks' ones, counted on the host as the batch was assembled
  int64_t queries() const { return q_ids.size(0); }
};

/// GradCache's first pass: the batch's query and passage embeddings ([B, D], [B*(1+H), D]) with no graph, embedded
/// chunk by chunk, each call given the next chunk of queries and the next chunk of passages (while each lasts).
std::pair<torch::Tensor, torch::Tensor> embed_in_chunks(const EncodeFn& encode, const PairBatch& batch, int64_t chunk);

/// Its second pass: the same calls again with a graph (the generators rewound by the caller, for the same dropout
/// masks), each chunk's rows of q_grad and p_grad pushed through its embeddings.
void backward_in_chunks(const EncodeFn& encode, const PairBatch& batch, int64_t chunk, const torch::Tensor& q_grad,
                        const torch::Tensor& p_grad);

/// Each returns the batch's loss (contrastive_loss: InfoNCE, or its Matryoshka sum), a detached float64 scalar
/// on the batch's device (reading it, `.item()`, waits for the device: a trainer reads it only when it reports);
/// gradients accumulate into the parameters and into `scale` if it needs grad.
torch::Tensor backward_full(const EncodeFn& encode, const PairBatch& batch, const torch::Tensor& scale,
                            const LossSpec& loss_spec = {});
torch::Tensor backward_plain(const EncodeFn& encode, const PairBatch& batch, const torch::Tensor& scale, int64_t chunk,
                             const LossSpec& loss_spec = {});
torch::Tensor backward_grad_cache(const EncodeFn& encode, const PairBatch& batch, const torch::Tensor& scale,
                                  int64_t chunk, const LossSpec& loss_spec = {});

}  // namespace ragmig::train
