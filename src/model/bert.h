// A BERT encoder written as torch::nn modules whose parameter names are exactly those of Hugging Face's
// BertModel (embeddings.*, encoder.layer.{i}.*; no pooler), so weights move between the two by name.
// Post-LN layers, exact (erf) GELU, dropout where HF has it, HF's initialisation.
#pragma once

#include <torch/torch.h>

#include "model/bert_config.h"
#include "model/lora_linear.h"

namespace ragmig::model {

/// How self-attention is computed. Manual is the reference (softmax(QK^T/sqrt(d) + mask) V); Fused uses
/// at::scaled_dot_product_attention, which exists only from LibTorch 2.0 (Manual is used below that).
enum class AttentionImpl { Manual, Fused };

/// True if this build has at::scaled_dot_product_attention.
bool fused_attention_available();

/// The additive attention mask [B,1,1,L]: 0 where mask==1, the lowest finite value of `dtype` where
/// mask==0. The lowest finite value (not -inf) keeps a fully masked row finite, and using the dtype's own
/// value keeps bf16/fp16 scores from overflowing.
torch::Tensor additive_attention_mask(const torch::Tensor& attention_mask, torch::ScalarType dtype);

class BertEmbeddingsImpl : public torch::nn::Module {
 public:
  explicit BertEmbeddingsImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);

  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr}, token_type_embeddings{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};  // HF's name, capital letters included

 private:
  double dropout_;
};
TORCH_MODULE(BertEmbeddings);

class BertSelfAttentionImpl : public torch::nn::Module {
 public:
  explicit BertSelfAttentionImpl(const BertConfig& config);
  /// hidden [B,L,H], additive_mask [B,1,1,L] -> context [B,L,H]
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& additive_mask, AttentionImpl impl);

  LoraLinear query{nullptr}, key{nullptr}, value{nullptr};

 private:
  int64_t heads_, head_dim_;
  double dropout_;
};
TORCH_MODULE(BertSelfAttention);

/// A dense layer, dropout, then LayerNorm of (result + residual): HF's BertSelfOutput and BertOutput.
class BertResidualOutputImpl : public torch::nn::Module {
 public:
  BertResidualOutputImpl(int64_t in_features, const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& residual);

  LoraLinear dense{nullptr};
  torch::nn::LayerNorm LayerNorm{nullptr};

 private:
  double dropout_;
};
TORCH_MODULE(BertResidualOutput);

class BertAttentionImpl : public torch::nn::Module {
 public:
  explicit BertAttentionImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& additive_mask, AttentionImpl impl);

  BertSelfAttention self{nullptr};
  BertResidualOutput output{nullptr};
};
TORCH_MODULE(BertAttention);

class BertIntermediateImpl : public torch::nn::Module {
 public:
  explicit BertIntermediateImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

  LoraLinear dense{nullptr};

 private:
  bool relu_;
};
TORCH_MODULE(BertIntermediate);

class BertLayerImpl : public torch::nn::Module {
 public:
  explicit BertLayerImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& additive_mask, AttentionImpl impl);

  BertAttention attention{nullptr};
  BertIntermediate intermediate{nullptr};
  BertResidualOutput output{nullptr};
};
TORCH_MODULE(BertLayer);

/// HF's BertEncoder: the list of layers, named "layer" so parameters read encoder.layer.{i}.*.
class BertEncoderImpl : public torch::nn::Module {
 public:
  explicit BertEncoderImpl(const BertConfig& config);
  torch::Tensor forward(torch::Tensor hidden, const torch::Tensor& additive_mask, AttentionImpl impl);

  torch::nn::ModuleList layer{nullptr};
};
TORCH_MODULE(BertEncoder);

/// BERT without the pooler: embeddings + encoder.layer.{i}.
class BertModelImpl : public torch::nn::Module {
 public:
  /// Builds and initialises the weights as HF does (normal(0, initializer_range) for Linear and Embedding
  /// weights, zero biases, LayerNorm 1/0, zero padding row), deterministic given torch::manual_seed.
  /// Throws DataError if the config is invalid.
  explicit BertModelImpl(const BertConfig& config);

  /// input_ids and attention_mask [B,L] int64 (mask 1 = token, 0 = padding); token_type_ids [B,L] int64
  /// or undefined for all zeros. Returns the last hidden state [B,L,H]. Throws DataError on bad shapes or
  /// L > max_position_embeddings.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                        const torch::Tensor& token_type_ids = {});

  /// Re-runs HF's initialisation (uses the global torch RNG).
  void reset_parameters_hf();

  const BertConfig& config() const { return config_; }
  AttentionImpl attention_impl() const { return attention_impl_; }
  /// Fused falls back to Manual where fused_attention_available() is false.
  void set_attention_impl(AttentionImpl impl);

  BertEmbeddings embeddings{nullptr};
  BertEncoder encoder{nullptr};

 private:
  BertConfig config_;
  AttentionImpl attention_impl_ = AttentionImpl::Manual;
};
TORCH_MODULE(BertModel);

}  // namespace ragmig::model
