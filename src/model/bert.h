// A BERT encoder written as torch::nn modules whose parameter names are exactly those of Hugging Face's
// BertModel (embeddings.*, encoder.layer.{i}.*; no pooler), so weights move between the two by name.
// Post-LN layers, exact (erf) GELU, dropout where HF has it, HF's initialisation. An MPNet config adds
// MPNetModel's relative position bias (encoder.relative_attention_bias) and position numbering; its other
// tensors keep BERT's names here (tensor_names.h maps them to MPNet's). A ModernBERT config makes the tower a
// ModernBERT (modernbert.h) with ModernBertModel's names instead, a decoder's config (Qwen3, Qwen2, Llama,
// Mistral) a Decoder (decoder.h) with their models' and a Gemma 3 config a Gemma3 (gemma3.h) with Gemma3TextModel's; the BERT parts are then absent.
#pragma once

#include <array>
#include <memory>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "model/bert_config.h"
#include "model/lora_linear.h"
#include "model/unpad.h"

namespace ragmig::model {

class ModernBert;  // modernbert.h
class Decoder;     // decoder.h
class Gemma3;      // gemma3.h

/// How self-attention is computed. Manual is the reference (softmax(QK^T/sqrt(d) + mask) V); Fused uses
/// at::scaled_dot_product_attention, which exists only from LibTorch 2.0 (Manual is used below that).
enum class AttentionImpl { Manual, Fused };

/// True if this build has at::scaled_dot_product_attention.
bool fused_attention_available();

/// The additive attention mask [B,1,1,L]: 0 where mask==1, the lowest finite value of `dtype` where
/// mask==0. The lowest finite value (not -inf) keeps a fully masked row finite, and using the dtype's own
/// value keeps bf16/fp16 scores from overflowing.
torch::Tensor additive_attention_mask(const torch::Tensor& attention_mask, torch::ScalarType dtype);

/// The lowest finite value of `dtype` as a 0-dim tensor on `device`: what additive_attention_mask (and the sliding
/// window masks of modernbert.h / local_attention.h) put where a key is masked.
torch::Tensor lowest_finite(torch::ScalarType dtype, torch::Device device);

/// MPNet's (and T5's) bucket of each relative position, [length, length] int64 on `device`: entry (i, j) buckets
/// j - i, num_buckets / 2 per direction, the nearer half exact and the rest logarithmic up to max_distance. The
/// float32 operations of HF's relative_position_bucket, on the device HF runs them on (the hidden states'), so
/// the buckets agree where the logarithm rounds, and no table crosses from the host per forward pass.
torch::Tensor relative_position_buckets(int64_t length, int64_t num_buckets, int64_t max_distance = 128,
                                        torch::Device device = torch::kCPU);

/// What every attention layer of one forward pass shares: the mask, the packing when the hidden states are
/// packed (unpad.h: [N, H] instead of [B, L, H]) and MPNet's position bias.
struct AttentionBatch {
  torch::Tensor mask;               ///< [B, L], 1 = token; on the host or the pass's device (score_bias copies it)
  /// Set: hidden states are the real tokens only. Shared, so that a checkpointed layer's replay in backward
  /// (activation_checkpoint.h) still finds it after the forward pass returned.
  std::shared_ptr<const Packing> packed;
  AttentionImpl impl = AttentionImpl::Fused;
  torch::Tensor position_bias;      ///< [1, heads, L, L] added to every layer's scores (MPNet), or undefined
  /// Set for a pass over several batches' packed tokens at once (BertModelImpl::forward_pair): `packed` is their
  /// join_packings, each part one batch (its own mask and packing, its tokens next in the packed order), `mask`
  /// unused. Where flash attention cannot take the joint packing, each part's attention is padded to its own length.
  std::vector<AttentionBatch> parts;

  /// What every layer adds to its scores, in `dtype` on `device`: additive_attention_mask [B, 1, 1, L], plus
  /// position_bias ([B, heads, L, L] then). Built by the first layer and reused by the others, so autograd keeps one
  /// copy. The mask goes to the device only here: a packed pass that flash attention takes never copies it.
  const torch::Tensor& score_bias(torch::ScalarType dtype, const torch::Device& device) const;
  mutable torch::Tensor score_bias_cache;  ///< score_bias's; not set by callers
};

class BertEmbeddingsImpl : public torch::nn::Module {
 public:
  explicit BertEmbeddingsImpl(const BertConfig& config);
  /// ids, token types and positions of one shape ([B, L] or packed [N]; positions may broadcast) -> [..., H].
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids, const torch::Tensor& positions);

  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr};
  torch::nn::Embedding token_type_embeddings{nullptr};  ///< none (and token types ignored) for MPNet
  torch::nn::LayerNorm LayerNorm{nullptr};  // HF's name, capital letters included

 private:
  double dropout_;
};
TORCH_MODULE(BertEmbeddings);

class BertSelfAttentionImpl : public torch::nn::Module {
 public:
  explicit BertSelfAttentionImpl(const BertConfig& config);
  /// hidden [B,L,H] (or packed [N,H]) -> context of the same shape
  torch::Tensor forward(const torch::Tensor& hidden, const AttentionBatch& batch);

  LoraLinear query{nullptr}, key{nullptr}, value{nullptr};

 private:
  /// q, k and v [.., H]: what query, key and value give `hidden`, their base products in one matmul.
  std::array<torch::Tensor, 3> project(const torch::Tensor& hidden);
  /// The context [.., H] of q, k and v [.., H] over `batch`.
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const AttentionBatch& batch);

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
  torch::Tensor forward(const torch::Tensor& hidden, const AttentionBatch& batch);

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
  torch::Tensor forward(const torch::Tensor& hidden, const AttentionBatch& batch);

  BertAttention attention{nullptr};
  BertIntermediate intermediate{nullptr};
  BertResidualOutput output{nullptr};
};
TORCH_MODULE(BertLayer);

/// HF's BertEncoder: the list of layers, named "layer" so parameters read encoder.layer.{i}.*; MPNet's
/// encoder also holds relative_attention_bias [buckets, heads], which it turns into batch.position_bias.
class BertEncoderImpl : public torch::nn::Module {
 public:
  explicit BertEncoderImpl(const BertConfig& config);
  /// `checkpoint`: each layer through activation_checkpoint.h's checkpointed (MPNet's position bias is then built
  /// inside each layer, so its replay gives relative_attention_bias its gradient).
  torch::Tensor forward(torch::Tensor hidden, AttentionBatch batch, bool checkpoint = false);

  torch::nn::ModuleList layer{nullptr};
  torch::nn::Embedding relative_attention_bias{nullptr};  ///< MPNet only
};
TORCH_MODULE(BertEncoder);

/// BERT without the pooler: embeddings + encoder.layer.{i}; or, for a "modernbert" config, ModernBERT
/// (modernbert.h: embeddings, layers.{i}, final_norm), for a decoder's config Decoder (decoder.h: embed_tokens,
/// layers.{i}, norm), for a "gemma3_text" config Gemma3 (gemma3.h: the same names); `embeddings` and `encoder` are
/// then null.
class BertModelImpl : public torch::nn::Module {
 public:
  /// Builds and initialises the weights as HF does (normal(0, initializer_range) for Linear and Embedding
  /// weights, zero biases, LayerNorm 1/0, zero padding row), deterministic given torch::manual_seed.
  /// Throws DataError if the config is invalid.
  explicit BertModelImpl(const BertConfig& config);

  /// input_ids and attention_mask [B,L] int64 (mask 1 = token, 0 = padding); token_type_ids [B,L] int64
  /// or undefined for all zeros (MPNet and ModernBERT ignore them). Returns the last hidden state [B,L,H].
  /// Throws DataError on bad shapes or L > config().max_tokens(). Unpadded (set_unpad), the padding positions of
  /// the result are zeros (HF computes values there that no pooling reads); the real tokens' states are the same
  /// up to float rounding (ModernBERT's as BERT's: unpadded but for the attention products). The mask may lie on
  /// the host while the ids are on a GPU: the packing is then made on the host, and the forward pass never waits
  /// for the GPU (a mask on the GPU makes it wait once, for the count of real tokens).
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                        const torch::Tensor& token_type_ids = {});

  /// forward(ids_a, mask_a) and forward(ids_b, mask_b) (a dual encoder's queries and passages: lengths may differ),
  /// through one pass over both batches' real tokens where joins_batches(): half the kernels of two passes, each of
  /// them larger, and one gradient per weight. The same states up to float rounding; with dropout, other masks.
  std::pair<torch::Tensor, torch::Tensor> forward_pair(const torch::Tensor& ids_a, const torch::Tensor& mask_a,
                                                       const torch::Tensor& ids_b, const torch::Tensor& mask_b);
  /// Whether forward_pair makes one pass: unpadded (set_unpad) BERT or ModernBERT (not MPNet, whose position bias
  /// is per length, nor the decoders and Gemma 3, which run padded). Otherwise it calls forward twice.
  bool joins_batches() const { return unpad_ && !config_.mpnet() && !config_.grouped_heads(); }

  /// Re-runs HF's initialisation (uses the global torch RNG).
  void reset_parameters_hf();

  const BertConfig& config() const { return config_; }
  AttentionImpl attention_impl() const { return attention_impl_; }
  /// Fused falls back to Manual where fused_attention_available() is false.
  void set_attention_impl(AttentionImpl impl);

  /// Run on the real tokens only (unpad.h). Off by default: serving's per-row adapter routes (lora_linear.h)
  /// index the rows of a padded batch. The decoders and Gemma 3 run padded whatever this says.
  void set_unpad(bool on) { unpad_ = on; }
  bool unpad() const { return unpad_; }

  /// Under autocast, keep BERT's residual stream (the embeddings' output, each sublayer's sum and its LayerNorm)
  /// in the autocast dtype, as the whole model in bf16 (evaluation) runs it. Autocast alone widens the stream to
  /// fp32 at every residual add (bf16 product + fp32 residual) and every LayerNorm (its fp32 policy on CUDA) and
  /// narrows it again at the next Linear: per layer two casts of [tokens, H] and fp32 adds and LayerNorms,
  /// forward and backward (on an H200 at BERT-base batch 512, casts and elementwise kernels were 25 % of kernel
  /// time). Post-LN normalises the stream after every sum, so its bf16 rounding is the rounding autocast gives the
  /// next Linear's input anyway. Off by default (autocast's fp32 stream, as sentence-transformers trains);
  /// ModernBERT, the decoders and Gemma 3 (pre-norm: an unnormalised stream over all layers) keep fp32 whatever this says.
  void set_bf16_residual(bool on) { bf16_residual_ = on; }
  /// While training, run each layer through activation_checkpoint.h's checkpointed: autograd keeps the layers'
  /// inputs only, and backward runs each layer again (the same gradients, one more forward's compute, one layer's
  /// activations at a time). Every family takes it.
  void set_activation_checkpointing(bool on) { checkpoint_layers_ = on; }
  bool activation_checkpointing() const { return checkpoint_layers_; }
  bool bf16_residual() const { return bf16_residual_ && !modern_ && !decoder_ && !gemma3_; }

  BertEmbeddings embeddings{nullptr};
  BertEncoder encoder{nullptr};

 private:
  /// input_ids as int64, checked against the mask and the config (DataError).
  torch::Tensor checked_ids(const torch::Tensor& input_ids, const torch::Tensor& attention_mask) const;
  /// The position ids of ids' columns, [1, L].
  torch::Tensor positions(const torch::Tensor& ids) const;
  /// The embeddings' output as the residual stream carries it: in the autocast dtype with set_bf16_residual.
  torch::Tensor residual_stream(const torch::Tensor& embedded) const;

  std::shared_ptr<ModernBert> modern_;  ///< set for a ModernBERT config
  std::shared_ptr<Decoder> decoder_;    ///< set for a decoder's config
  std::shared_ptr<Gemma3> gemma3_;      ///< set for a Gemma 3 config
  BertConfig config_;
  AttentionImpl attention_impl_ = AttentionImpl::Manual;
  bool unpad_ = false;
  bool bf16_residual_ = false;
  bool checkpoint_layers_ = false;
};
TORCH_MODULE(BertModel);

}  // namespace ragmig::model
