// What a training step asks of its encoder: embeddings of token batches, each for its tower, several of them
// through one forward pass where the model can (a step's queries and passages, in a dual encoder with one shared,
// unpadded BERT or ModernBERT tower: model/dual_encoder.h's encode_pair).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

#include "model/dual_encoder.h"

namespace ragmig::train {

enum class Tower { Query, Passage };

/// Token ids [rows, L] and their mask [rows, L] (the mask may lie on the host with the ids on a GPU) for a tower.
struct TowerInput {
  torch::Tensor ids, mask;
  Tower tower = Tower::Query;
};

/// Embeds each input into [rows, D] float32 embeddings, in order.
using EncodeFn = std::function<std::vector<torch::Tensor>(const std::vector<TowerInput>& inputs)>;

/// `net`'s embeddings of `inputs`: a query batch followed by a passage batch through encode_pair when `one_pass`
/// (one forward pass where the model joins them), every other input through its own tower.
std::vector<torch::Tensor> encode_towers(model::DualEncoder& net, const std::vector<TowerInput>& inputs,
                                         bool one_pass = true);

/// encode({{ids, mask, tower}})'s one embedding.
torch::Tensor encode_one(const EncodeFn& encode, const torch::Tensor& ids, const torch::Tensor& mask, Tower tower);

}  // namespace ragmig::train
