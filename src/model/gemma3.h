// Gemma 3's text model (EmbeddingGemma's architecture) as Hugging Face's Gemma3TextModel computes it with
// use_bidirectional_attention, parameter names included (embed_tokens, layers.{i}.self_attn.{q,k,v,o}_proj, .q_norm,
// .k_norm, layers.{i}.mlp.{gate,up,down}_proj, layers.{i}.{input,post_attention,pre_feedforward,
// post_feedforward}_layernorm, norm), so weights move between the two by name. Token embeddings times
// sqrt(hidden_size); each layer: RMSNorm, self-attention over the whole input (global layers) or the tokens within
// sliding_window / 2 of each (sliding layers), both ways, with rotary positions (a base per layer type), queries and
// keys RMS-normed per head, grouped key/value heads and scores scaled by query_pre_attn_scalar^-1/2; RMSNorm, then
// the residual sum; RMSNorm, a GeGLU MLP (down(gelu_tanh(gate(x)) * up(x))), RMSNorm, the residual sum. A final
// RMSNorm. Gemma's RMSNorm scales by (1 + weight), so a zero weight is the identity.
// Linear layers are LoraLinear, so LoRA and serving's adapter routes apply as on BERT. The tower (BertModel, bert.h)
// holds one when its config says "gemma3_text". Masks, windows and rotary tables are ModernBERT's (a
// ModernBertBatch, modernbert.h: the same bidirectional sliding windows), as are the blocks of keys a long input's
// sliding layers run in (local_attention.h). Padded batches only.
#pragma once

#include <torch/torch.h>

#include "model/bert.h"
#include "model/bert_config.h"
#include "model/lora_linear.h"
#include "model/modernbert.h"

namespace ragmig::model {

/// Gemma3RMSNorm: x / sqrt(mean(x^2) + eps) times (1 + weight), in float32, back to x's dtype.
class Gemma3RmsNormImpl : public torch::nn::Module {
 public:
  Gemma3RmsNormImpl(int64_t size, double eps);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight;  ///< zeros: the identity scale

 private:
  double eps_;
};
TORCH_MODULE(Gemma3RmsNorm);

class Gemma3AttentionImpl : public torch::nn::Module {
 public:
  Gemma3AttentionImpl(const BertConfig& config, bool sliding);
  /// hidden [B, L, H] (already normed) -> the attention's output of the same shape (after o_proj).
  torch::Tensor forward(const torch::Tensor& hidden, const ModernBertBatch& batch);

  LoraLinear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  Gemma3RmsNorm q_norm{nullptr}, k_norm{nullptr};

 private:
  /// softmax(q k^T * scale + bias) v with attention dropout: SDPA, or the manual path (dropout on a CPU).
  torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                       const torch::Tensor& bias, AttentionImpl impl);

  int64_t heads_, kv_heads_, head_dim_;
  double scale_, dropout_;
  bool sliding_;
};
TORCH_MODULE(Gemma3Attention);

class Gemma3MlpImpl : public torch::nn::Module {
 public:
  explicit Gemma3MlpImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

  LoraLinear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(Gemma3Mlp);

class Gemma3LayerImpl : public torch::nn::Module {
 public:
  Gemma3LayerImpl(const BertConfig& config, int64_t index);
  torch::Tensor forward(const torch::Tensor& hidden, const ModernBertBatch& batch);

  Gemma3Attention self_attn{nullptr};
  Gemma3Mlp mlp{nullptr};
  Gemma3RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr}, pre_feedforward_layernorm{nullptr},
      post_feedforward_layernorm{nullptr};
};
TORCH_MODULE(Gemma3Layer);

/// Gemma3TextModel's parts, registered on the module that owns them (the tower) under HF's top-level names
/// (embed_tokens, layers, norm), as ModernBert's (modernbert.h).
class Gemma3 {
 public:
  Gemma3(torch::nn::Module& owner, const BertConfig& config);

  /// ids and mask [B, L] int64 (mask 1 = token) -> the last hidden state [B, L, H]; padding positions hold values
  /// no pooling reads.
  /// `checkpoint`: each layer through activation_checkpoint.h's checkpointed.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask, AttentionImpl impl,
                        bool checkpoint = false);

  /// HF's initialisation (uses the global torch RNG): normal(0, initializer_range) for the embeddings and every
  /// projection, zero biases, RMSNorm weights 0 (scale 1).
  void reset_parameters_hf();

  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  Gemma3RmsNorm norm{nullptr};

 private:
  BertConfig config_;
};

}  // namespace ragmig::model
