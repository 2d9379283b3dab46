#include "model/decoder.h"

#include <cmath>

#include "model/activation_checkpoint.h"
#include "model/attention_probs.h"

namespace ragmig::model {

RmsNormImpl::RmsNormImpl(int64_t size, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({size}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
  const auto xf = x.to(torch::kFloat);
  const auto normed = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps_);
  return weight * normed.to(x.scalar_type());
}

const torch::Tensor& DecoderBatch::causal_bias(torch::ScalarType dtype) const {
  if (bias_cache.defined() && bias_cache.scalar_type() == dtype) return bias_cache;
  const auto future = torch::ones({length, length}, torch::TensorOptions().dtype(torch::kBool).device(device)).triu(1);
  const auto lowest = lowest_finite(dtype, device);
  bias_cache = torch::where(future, lowest, torch::zeros({}, lowest.options())).view({1, 1, length, length});
  return bias_cache;
}

DecoderAttentionImpl::DecoderAttentionImpl(const BertConfig& c)
    : heads_(c.num_attention_heads), kv_heads_(c.decoder.num_key_value_heads), head_dim_(c.decoder.head_dim),
      dropout_(c.attention_probs_dropout_prob) {
  const DecoderOptions& d = c.decoder;
  q_proj = register_module("q_proj", LoraLinear(c.hidden_size, c.query_width(), d.qkv_bias));
  k_proj = register_module("k_proj", LoraLinear(c.hidden_size, c.key_width(), d.qkv_bias));
  v_proj = register_module("v_proj", LoraLinear(c.hidden_size, c.key_width(), d.qkv_bias));
  o_proj = register_module("o_proj", LoraLinear(c.query_width(), c.hidden_size, d.output_bias));
  if (d.qk_norm) {
    q_norm = register_module("q_norm", RmsNorm(head_dim_, c.layer_norm_eps));
    k_norm = register_module("k_norm", RmsNorm(head_dim_, c.layer_norm_eps));
  }
}

torch::Tensor DecoderAttentionImpl::forward(const torch::Tensor& hidden, const DecoderBatch& batch) {
  const auto b = hidden.size(0), l = hidden.size(1);
  // [B, L, heads, d] -> normed per head (Qwen3) -> [B, heads, L, d], rotated; keys and values repeated for their
  // groups.
  auto q = q_proj(hidden).view({b, l, heads_, head_dim_});
  auto k = k_proj(hidden).view({b, l, kv_heads_, head_dim_});
  if (q_norm) {
    q = q_norm(q);
    k = k_norm(k);
  }
  q = apply_rotary(q.transpose(1, 2), batch.rotary);
  k = apply_rotary(k.transpose(1, 2), batch.rotary);
  auto v = v_proj(hidden).view({b, l, kv_heads_, head_dim_}).transpose(1, 2);
  if (kv_heads_ != heads_) {
    k = k.repeat_interleave(heads_ / kv_heads_, 1);
    v = v.repeat_interleave(heads_ / kv_heads_, 1);
  }
  const bool training = is_training();
  torch::Tensor context;
#if TORCH_VERSION_MAJOR >= 2
  const bool cpu_dropout = training && dropout_ > 0 && q.device().is_cpu();
  if (batch.impl == AttentionImpl::Fused && !cpu_dropout)
    context = at::scaled_dot_product_attention(q, k, v, {}, training ? dropout_ : 0.0, /*is_causal=*/true);
#endif
  if (!context.defined()) {
    const auto scores = torch::matmul(q * (1.0 / std::sqrt(static_cast<double>(head_dim_))), k.transpose(-1, -2));
    context = attention_probs_matmul(scores, batch.causal_bias(q.scalar_type()), v, dropout_, training);
  }
  return o_proj(context.transpose(1, 2).reshape({b, l, heads_ * head_dim_}));
}

DecoderMlpImpl::DecoderMlpImpl(const BertConfig& c) {
  const bool bias = c.decoder.mlp_bias;
  gate_proj = register_module("gate_proj", LoraLinear(c.hidden_size, c.intermediate_size, bias));
  up_proj = register_module("up_proj", LoraLinear(c.hidden_size, c.intermediate_size, bias));
  down_proj = register_module("down_proj", LoraLinear(c.intermediate_size, c.hidden_size, bias));
}

torch::Tensor DecoderMlpImpl::forward(const torch::Tensor& x) { return down_proj(torch::silu(gate_proj(x)) * up_proj(x)); }

DecoderLayerImpl::DecoderLayerImpl(const BertConfig& c) {
  self_attn = register_module("self_attn", DecoderAttention(c));
  mlp = register_module("mlp", DecoderMlp(c));
  input_layernorm = register_module("input_layernorm", RmsNorm(c.hidden_size, c.layer_norm_eps));
  post_attention_layernorm = register_module("post_attention_layernorm", RmsNorm(c.hidden_size, c.layer_norm_eps));
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& hidden, const DecoderBatch& batch) {
  const auto h = hidden + self_attn(input_layernorm(hidden), batch);
  return h + mlp(post_attention_layernorm(h));
}

Decoder::Decoder(torch::nn::Module& owner, const BertConfig& config) : config_(config) {
  embed_tokens = owner.register_module("embed_tokens", torch::nn::Embedding(config.vocab_size, config.hidden_size));
  layers = owner.register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) layers->push_back(DecoderLayer(config));
  norm = owner.register_module("norm", RmsNorm(config.hidden_size, config.layer_norm_eps));
}

torch::Tensor Decoder::forward(const torch::Tensor& input_ids, AttentionImpl impl, bool checkpoint) {
  auto batch = std::make_shared<DecoderBatch>();
  batch->length = input_ids.size(1);
  batch->device = input_ids.device();
  batch->rotary = rotary_tables(batch->length, config_.decoder.head_dim, config_.decoder.rope_theta, batch->device);
  batch->impl = impl;
  const auto run = [batch](DecoderLayerImpl& layer, const torch::Tensor& h) { return layer.forward(h, *batch); };
  return norm(run_layers<DecoderLayerImpl>(layers, embed_tokens(input_ids), checkpoint, run));
}

void Decoder::reset_parameters_hf() {
  torch::NoGradGuard no_grad;
  const double std = config_.initializer_range;
  embed_tokens->weight.normal_(0.0, std);
  for (const auto& item : *layers) {
    auto* layer = item->as<DecoderLayerImpl>();
    for (LoraLinear* linear : {&layer->self_attn->q_proj, &layer->self_attn->k_proj, &layer->self_attn->v_proj,
                               &layer->self_attn->o_proj, &layer->mlp->gate_proj, &layer->mlp->up_proj,
                               &layer->mlp->down_proj}) {
      (*linear)->weight.normal_(0.0, std);
      if ((*linear)->bias.defined()) (*linear)->bias.zero_();
    }
    for (RmsNorm* n : {&layer->self_attn->q_norm, &layer->self_attn->k_norm, &layer->input_layernorm,
                       &layer->post_attention_layernorm})
      if (*n) (*n)->weight.fill_(1.0);
  }
  norm->weight.fill_(1.0);
}

}  // namespace ragmig::model
