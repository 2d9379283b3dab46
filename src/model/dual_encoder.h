// The dual encoder that ragmig trains: BERT towers for queries and passages (one shared tower or two),
// pooled to one vector per text (mean over real tokens, the [CLS] position, the maximum over real tokens, or
// sentence-transformers' mean_sqrt_len_tokens), optionally through Dense layers (a chain per tower: EmbeddingGemma
// has two), and optionally L2-normalised.
#pragma once

#include <torch/torch.h>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/bert.h"
#include "model/bert_config.h"
#include "model/dense.h"
#include "model/pooling_mode.h"

namespace ragmig::model {

struct EncoderSpec {
  BertConfig bert;
  Pooling pooling = Pooling::Mean;
  /// Dense layers after pooling, in order (sentence-transformers' Dense modules); none by default.
  std::vector<DenseConfig> dense;
  bool normalize = true;
  bool shared_towers = true;

  /// The size of the embeddings: the last Dense layer's out_features, else the hidden size.
  int64_t embedding_dim() const { return dense.empty() ? bert.hidden_size : dense.back().out_features; }
};

/// Pools a last hidden state [B,L,H] with its attention mask [B,L] into [B,H] float32. Mean averages the
/// mask==1 positions only (a sequence with no such position gives zeros), so padding never changes a
/// sequence's vector; Cls takes position 0; Max the largest value of each dimension over the mask==1 positions
/// (-inf with none, as sentence-transformers); MeanSqrtLen the sum over them divided by the square root of their
/// number.
torch::Tensor pool(const torch::Tensor& hidden, const torch::Tensor& attention_mask, Pooling pooling);

class DualEncoderImpl : public torch::nn::Module {
 public:
  /// Builds the towers with HF initialisation (deterministic given torch::manual_seed); with separate
  /// towers the passage tower is initialised after, and independently of, the query tower.
  explicit DualEncoderImpl(const EncoderSpec& spec);

  /// ids, mask [B,L] int64 -> [B,D] float32 (D = spec.embedding_dim()), pooled, through the Dense layers, then
  /// (if spec.normalize) L2-normalised. The mask may lie on the host with the ids on a GPU (BertModelImpl::forward).
  torch::Tensor encode_queries(const torch::Tensor& ids, const torch::Tensor& mask);
  torch::Tensor encode_passages(const torch::Tensor& ids, const torch::Tensor& mask);
  /// encode_queries(q_ids, q_mask) and encode_passages(p_ids, p_mask); with shared towers both through one forward
  /// pass where the tower joins batches (BertModelImpl::forward_pair: unpadded BERT).
  std::pair<torch::Tensor, torch::Tensor> encode_pair(const torch::Tensor& q_ids, const torch::Tensor& q_mask,
                                                      const torch::Tensor& p_ids, const torch::Tensor& p_mask);
  /// Whether encode_pair makes one forward pass: one shared tower that joins batches.
  bool joins_pairs() const { return !passage_ && query_->joins_batches(); }

  const EncoderSpec& spec() const { return spec_; }
  /// How embeddings are made of the towers' states (no parameters change): a fine-tune's model.pooling and
  /// model.normalize over model.init's.
  void set_pooling(Pooling pooling) { spec_.pooling = pooling; }
  void set_normalize(bool normalize) { spec_.normalize = normalize; }

  /// Registered as "query": parameters are query.embeddings.*, query.encoder.layer.{i}.*.
  BertModel query_tower() const { return query_; }
  /// Registered as "passage" with separate towers; the query tower when shared.
  BertModel passage_tower() const { return passage_ ? passage_ : query_; }
  /// The Dense layers after the query tower's pooling, one per spec.dense ("query_dense", then "query_dense2",
  /// ...; "passage_dense", ... are the passage tower's with separate towers, else the same); none without.
  std::vector<Dense> query_dense() const { return query_dense_; }
  std::vector<Dense> passage_dense() const { return passage_dense_.empty() ? query_dense_ : passage_dense_; }
  /// A tower's pooled vectors [B,H] (any float dtype) through its Dense layers, as at least float32; `pooled`
  /// itself without one.
  torch::Tensor project(const torch::Tensor& pooled, bool passage);

 private:
  torch::Tensor encode(bool passage, const torch::Tensor& ids, const torch::Tensor& mask);
  /// A tower's last hidden state [B, L, H] with its mask -> the embeddings: pooled, projected, normalised.
  torch::Tensor embedding(const torch::Tensor& hidden, const torch::Tensor& mask, bool passage);

  EncoderSpec spec_;
  BertModel query_{nullptr};
  BertModel passage_{nullptr};  // null when the towers are shared
  std::vector<Dense> query_dense_;
  std::vector<Dense> passage_dense_;  // empty when the towers are shared
};
TORCH_MODULE(DualEncoder);

/// A copy of `net` (which has no Dense layer) with a new one after pooling, one per tower, in PyTorch's nn.Linear
/// initialisation (deterministic given torch::manual_seed): the towers' weights are `net`'s.
DualEncoder with_dense_layer(DualEncoder& net, const DenseConfig& dense);

}  // namespace ragmig::model
