// ModernBERT (Warner et al. 2024) as Hugging Face's ModernBertModel computes it, parameter names included
// (embeddings.tok_embeddings, layers.{i}.attn.Wqkv, ..., final_norm), so weights move between the two by name:
// token embeddings through a LayerNorm; pre-LN layers (the first without its attention norm) of self-attention
// with rotary positions (a base per layer type) over the whole input (global layers) or a window of
// local_attention / 2 tokens each side (sliding layers), and a gated MLP (act(input) * gate from one Wi);
// a final LayerNorm. Linear layers are LoraLinear, so LoRA and serving's adapter routes apply as on BERT.
// The tower (BertModel, bert.h) holds one when its config says "modernbert".
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "model/bert.h"
#include "model/bert_config.h"
#include "model/lora_linear.h"
#include "model/rotary.h"
#include "model/unpad.h"

namespace ragmig::model {

/// nn.LayerNorm with or without a bias (ModernBERT's norm_bias), its parameters named as PyTorch names them.
class BiasOptionalLayerNormImpl : public torch::nn::Module {
 public:
  BiasOptionalLayerNormImpl(int64_t size, double eps, bool bias);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight, bias;  ///< bias undefined without one

 private:
  int64_t size_;
  double eps_;
};
TORCH_MODULE(BiasOptionalLayerNorm);

/// The additive sliding-window mask [B, 1, L, L]: additive_attention_mask's padding, and the lowest value of
/// `dtype` wherever |i - j| > half_window.
torch::Tensor sliding_window_mask(const torch::Tensor& attention_mask, int64_t half_window, torch::ScalarType dtype);

/// What every layer of one forward pass shares: the masks (built once per dtype), rotary tables per layer type and
/// the packing when the hidden states are packed (unpad.h: [N, H] instead of [B, L, H]). Each is made on first use:
/// a packed pass that flash attention takes never copies the mask to the device, nor builds the padded tables.
struct ModernBertBatch {
  torch::Tensor mask;  ///< [B, L], 1 = token; on the host or on `device` (score_bias copies it)
  std::shared_ptr<const Packing> packed;  ///< shared, as AttentionBatch's (bert.h)
  int64_t half_window = 64;
  int64_t length = 0, head_dim = 0;         ///< of the rotary tables: positions 0..length-1
  double global_theta = 0, local_theta = 0;  ///< the rotary bases of global and sliding layers
  torch::Device device = torch::kCPU;       ///< where the pass runs
  AttentionImpl impl = AttentionImpl::Fused;

  /// The additive mask of a global ([B, 1, 1, L]) or sliding ([B, 1, L, L]) layer in `dtype`.
  const torch::Tensor& score_bias(bool sliding, torch::ScalarType dtype) const;
  /// A sliding layer's mask in blocks (local_attention.h: [B * nb, 1, w, 3w]) in `dtype`.
  const torch::Tensor& local_block_bias(torch::ScalarType dtype) const;
  /// Attention of q, k, v [B, heads, L, d] under this batch's mask for a sliding or global layer: a sliding layer's
  /// in blocks of keys where local_blocks_pay (local_attention.h), else the whole product under score_bias.
  /// `attend(q, k, v, bias)` computes one masked product (SDPA or the manual path, the layer's scale and dropout).
  torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool sliding,
                          const std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&,
                                                            const torch::Tensor&, const torch::Tensor&)>& attend) const;
  /// A global or sliding layer's rotary tables (rotary_tables over `length` positions, built once).
  const RotaryTables& rotary(bool sliding) const;
  /// A global or sliding layer's rotary tables for the packed tokens (packed_rotary_tables, built once).
  const RotaryTables& packed_rotary(bool sliding) const;
  /// Set for a pass over several batches' packed tokens at once (ModernBert::forward_pair), as
  /// AttentionBatch::parts (bert.h): `packed` is their join_packings (rotary tables as long as the longest batch),
  /// each part one batch; where flash attention cannot take the join, each part's attention is padded on its own.
  std::vector<ModernBertBatch> parts;

  mutable torch::Tensor global_bias_cache, sliding_bias_cache, local_block_bias_cache;  ///< not set by callers
  mutable RotaryTables global_cache, local_cache, packed_global_cache, packed_local_cache;  ///< not set by callers
  mutable torch::Tensor device_mask_cache;  ///< `mask` on `device`; not set by callers

 private:
  const torch::Tensor& mask_on_device() const;
};

class ModernBertEmbeddingsImpl : public torch::nn::Module {
 public:
  explicit ModernBertEmbeddingsImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& input_ids);

  torch::nn::Embedding tok_embeddings{nullptr};
  BiasOptionalLayerNorm norm{nullptr};

 private:
  double dropout_;
};
TORCH_MODULE(ModernBertEmbeddings);

class ModernBertAttentionImpl : public torch::nn::Module {
 public:
  ModernBertAttentionImpl(const BertConfig& config, bool sliding);
  /// hidden [B, L, H] or packed [N, H] (already normed) -> the attention's output of the same shape (after Wo).
  /// Packed, the attention runs as variable-length flash attention (with the window on sliding layers) where
  /// varlen_attention can, else on the rows padded back.
  torch::Tensor forward(const torch::Tensor& hidden, const ModernBertBatch& batch);

  LoraLinear Wqkv{nullptr}, Wo{nullptr};

 private:
  /// Wqkv's output -> the attention's context: packed_context, else padded_context (part by part for a join).
  torch::Tensor context(const torch::Tensor& projected, const ModernBertBatch& batch);
  /// Wqkv's packed output [N, 3H] -> the attention's context [N, H] through varlen_attention, or undefined.
  torch::Tensor packed_context(const torch::Tensor& projected, const ModernBertBatch& batch);
  /// Wqkv's output [B, L, 3H] or packed [N, 3H] -> context of the same leading shape, on the padded rows; a
  /// sliding layer's in blocks of keys where local_blocks_pay (local_attention.h).
  torch::Tensor padded_context(const torch::Tensor& projected, const ModernBertBatch& batch);
  /// softmax(q k^T / sqrt(d) + bias) v, with attention dropout: SDPA, or the manual path (keyed dropout on a CPU).
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& bias, AttentionImpl impl);

  int64_t heads_, head_dim_;
  double dropout_;
  bool sliding_;
};
TORCH_MODULE(ModernBertAttention);

/// Wo(dropout(act(input) * gate)) with input, gate = Wi(x) split in halves.
class ModernBertMlpImpl : public torch::nn::Module {
 public:
  explicit ModernBertMlpImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

  LoraLinear Wi{nullptr}, Wo{nullptr};

 private:
  bool relu_;
  double dropout_;
};
TORCH_MODULE(ModernBertMlp);

class ModernBertLayerImpl : public torch::nn::Module {
 public:
  ModernBertLayerImpl(const BertConfig& config, int64_t index);
  torch::Tensor forward(const torch::Tensor& hidden, const ModernBertBatch& batch);

  BiasOptionalLayerNorm attn_norm{nullptr};  ///< none in layer 0 (HF's nn.Identity)
  ModernBertAttention attn{nullptr};
  BiasOptionalLayerNorm mlp_norm{nullptr};
  ModernBertMlp mlp{nullptr};
};
TORCH_MODULE(ModernBertLayer);

/// ModernBertModel's parts, registered on the module that owns them (the tower) under HF's top-level names
/// (embeddings, layers, final_norm): so the tower's parameter names are HF's, and it stays the one module
/// whose mode and device its users set.
class ModernBert {
 public:
  ModernBert(torch::nn::Module& owner, const BertConfig& config);

  /// ids and mask [B, L] int64 (mask 1 = token) -> the last hidden state [B, L, H]. `unpad`: every part but the
  /// attention products runs on the real tokens only, and the padding positions of the result are zeros.
  /// `checkpoint`: each layer through activation_checkpoint.h's checkpointed.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask, AttentionImpl impl,
                        bool unpad, bool checkpoint = false);
  /// forward(ids_a, mask_a, impl, true) and forward(ids_b, mask_b, impl, true) through one pass over both batches'
  /// real tokens (BertModelImpl::forward_pair); the same states up to float rounding.
  std::pair<torch::Tensor, torch::Tensor> forward_pair(const torch::Tensor& ids_a, const torch::Tensor& mask_a,
                                                       const torch::Tensor& ids_b, const torch::Tensor& mask_b,
                                                       AttentionImpl impl, bool checkpoint = false);

  /// HF's initialisation (uses the global torch RNG): truncated normals (2 std) of initializer_range for the
  /// embeddings, Wqkv and Wi, initializer_range / sqrt(2 layers) for both Wo; zero biases, LayerNorms 1.
  void reset_parameters_hf();

  ModernBertEmbeddings embeddings{nullptr};
  torch::nn::ModuleList layers{nullptr};
  BiasOptionalLayerNorm final_norm{nullptr};

 private:
  /// The batch of one forward pass over ids of `length` columns with `mask`, packed by `packing` when given.
  ModernBertBatch batch_of(const torch::Tensor& mask, int64_t length, std::shared_ptr<const Packing> packing,
                           AttentionImpl impl, const torch::Device& device) const;
  /// Embeddings, layers and the final norm over `ids` (packed [N] or [B, L]); `checkpoint`: each layer through
  /// activation_checkpoint.h's checkpointed.
  torch::Tensor run(const torch::Tensor& ids, ModernBertBatch batch, bool checkpoint);

  BertConfig config_;
};

}  // namespace ragmig::model
