// The decoders read as encoders through Llama's layer, as Hugging Face's Qwen3Model, Qwen2Model, LlamaModel and
// MistralModel compute them, parameter names included (embed_tokens, layers.{i}.self_attn.{q,k,v,o}_proj, Qwen3's
// .q_norm and .k_norm, layers.{i}.mlp.{gate,up,down}_proj, layers.{i}.input_layernorm, .post_attention_layernorm,
// norm), so weights move between the two by name. Each layer: RMSNorm, causal self-attention with rotary positions
// and grouped key/value heads (each shared by num_attention_heads / num_key_value_heads query heads; Qwen3 RMS-norms
// each head's queries and keys), RMSNorm, a SwiGLU MLP (down(silu(gate(x)) * up(x))); residual sums around both. A
// final RMSNorm. The families differ only in which projections carry biases and in Qwen3's per-head norms
// (DecoderOptions). Their embedding is usually the last token's (Pooling::LastToken: the tokenizer appends
// <|endoftext|> or </s>, which has seen the whole text); a mean over a causal model's states works too.
// Linear layers are LoraLinear, so LoRA and serving's adapter routes apply as on BERT. The tower (BertModel, bert.h)
// holds one when its config is a decoder's. Padded batches only, padded on the right (as ragmig pads): causal
// attention alone then keeps every real token from the padding after it, so no mask is built (SDPA takes its causal
// path: flash or memory-efficient kernels, no [L, L] scores in memory), and a real token's state is the one of its
// row alone (positions 0.. from the first: the same states as Hugging Face's left padding gives, rotary scores
// depending on distances only). The padding positions hold states no pooling reads.
#pragma once

#include <torch/torch.h>

#include "model/bert.h"
#include "model/bert_config.h"
#include "model/lora_linear.h"
#include "model/rotary.h"

namespace ragmig::model {

/// LlamaRMSNorm (Qwen3RMSNorm, ...): x / sqrt(mean(x^2) + eps) in float32, back to x's dtype, times the weight (no bias).
class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t size, double eps);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(RmsNorm);

/// What every layer of one forward pass shares: the rotary tables, and the causal mask where the attention is not
/// SDPA's causal path (built on first use, once per dtype).
struct DecoderBatch {
  int64_t length = 0;
  torch::Device device = torch::kCPU;
  RotaryTables rotary;
  AttentionImpl impl = AttentionImpl::Fused;

  /// [1, 1, L, L] in `dtype`: 0 where query i may see key j (j <= i), the lowest value of dtype elsewhere.
  const torch::Tensor& causal_bias(torch::ScalarType dtype) const;
  mutable torch::Tensor bias_cache;  ///< not set by callers
};

class DecoderAttentionImpl : public torch::nn::Module {
 public:
  explicit DecoderAttentionImpl(const BertConfig& config);
  /// hidden [B, L, H] (already normed) -> the attention's output of the same shape (after o_proj).
  torch::Tensor forward(const torch::Tensor& hidden, const DecoderBatch& batch);

  LoraLinear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  RmsNorm q_norm{nullptr}, k_norm{nullptr};  ///< Qwen3's only (DecoderOptions::qk_norm)

 private:
  int64_t heads_, kv_heads_, head_dim_;
  double dropout_;
};
TORCH_MODULE(DecoderAttention);

class DecoderMlpImpl : public torch::nn::Module {
 public:
  explicit DecoderMlpImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

  LoraLinear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(DecoderMlp);

class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const BertConfig& config);
  torch::Tensor forward(const torch::Tensor& hidden, const DecoderBatch& batch);

  DecoderAttention self_attn{nullptr};
  DecoderMlp mlp{nullptr};
  RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
};
TORCH_MODULE(DecoderLayer);

/// The model's parts (Qwen3Model's, LlamaModel's, ...), registered on the module that owns them (the tower) under HF's top-level names
/// (embed_tokens, layers, norm), as ModernBert's (modernbert.h).
class Decoder {
 public:
  Decoder(torch::nn::Module& owner, const BertConfig& config);

  /// ids [B, L] int64, padded on the right -> the last hidden state [B, L, H]; the padding positions hold values no
  /// pooling reads (the mask is not needed: causal attention keeps the real tokens from the padding after them).
  /// `checkpoint`: each layer through activation_checkpoint.h's checkpointed.
  torch::Tensor forward(const torch::Tensor& input_ids, AttentionImpl impl, bool checkpoint = false);

  /// HF's initialisation (uses the global torch RNG): normal(0, initializer_range) for the embeddings and every
  /// projection, zero biases, RMSNorm weights 1.
  void reset_parameters_hf();

  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  RmsNorm norm{nullptr};

 private:
  BertConfig config_;
};

}  // namespace ragmig::model
