// The Gemma 3 math, in the operation order of transformers' modeling_gemma3.py (norms and rotations in float32, the
// embedding scale rounded to the weights' dtype), so outputs agree with it to float rounding (tests/hf).
#include "model/gemma3.h"

#include <cmath>

#include "model/activation_checkpoint.h"
#include "model/attention_probs.h"

namespace ragmig::model {

Gemma3RmsNormImpl::Gemma3RmsNormImpl(int64_t size, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::zeros({size}));
}

torch::Tensor Gemma3RmsNormImpl::forward(const torch::Tensor& x) {
  const auto xf = x.to(torch::kFloat);
  const auto normed = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps_);
  return (normed * (1.0 + weight.to(torch::kFloat))).to(x.scalar_type());
}

Gemma3AttentionImpl::Gemma3AttentionImpl(const BertConfig& c, bool sliding)
    : heads_(c.num_attention_heads),
      kv_heads_(c.gemma3.num_key_value_heads),
      head_dim_(c.gemma3.head_dim),
      scale_(1.0 / std::sqrt(static_cast<double>(c.gemma3.query_pre_attn_scalar))),
      dropout_(c.attention_probs_dropout_prob),
      sliding_(sliding) {
  const bool bias = c.gemma3.attention_bias;
  q_proj = register_module("q_proj", LoraLinear(c.hidden_size, c.query_width(), bias));
  k_proj = register_module("k_proj", LoraLinear(c.hidden_size, c.key_width(), bias));
  v_proj = register_module("v_proj", LoraLinear(c.hidden_size, c.key_width(), bias));
  o_proj = register_module("o_proj", LoraLinear(c.query_width(), c.hidden_size, bias));
  q_norm = register_module("q_norm", Gemma3RmsNorm(head_dim_, c.layer_norm_eps));
  k_norm = register_module("k_norm", Gemma3RmsNorm(head_dim_, c.layer_norm_eps));
}

torch::Tensor Gemma3AttentionImpl::forward(const torch::Tensor& hidden, const ModernBertBatch& batch) {
  const auto b = hidden.size(0), l = hidden.size(1);
  // [B, L, heads, d] -> normed per head -> [B, heads, L, d], rotated; keys and values repeated for their groups.
  const RotaryTables& rotary = batch.rotary(sliding_);
  const auto q = apply_rotary(q_norm(q_proj(hidden).view({b, l, heads_, head_dim_})).transpose(1, 2), rotary);
  auto k = apply_rotary(k_norm(k_proj(hidden).view({b, l, kv_heads_, head_dim_})).transpose(1, 2), rotary);
  auto v = v_proj(hidden).view({b, l, kv_heads_, head_dim_}).transpose(1, 2);
  if (kv_heads_ != heads_) {
    k = k.repeat_interleave(heads_ / kv_heads_, 1);
    v = v.repeat_interleave(heads_ / kv_heads_, 1);
  }
  const auto context =
      batch.attention(q, k, v, sliding_, [&](const auto& qs, const auto& ks, const auto& vs, const auto& bias) {
        return attend(qs, ks, vs, bias, batch.impl);
      });
  return o_proj(context.transpose(1, 2).reshape({b, l, heads_ * head_dim_}));
}

torch::Tensor Gemma3AttentionImpl::attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                          const torch::Tensor& bias, AttentionImpl impl) {
  const bool training = is_training();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)  // SDPA's scale
  const bool cpu_dropout = training && dropout_ > 0 && q.device().is_cpu();
  if (impl == AttentionImpl::Fused && !cpu_dropout)
    return at::scaled_dot_product_attention(q, k, v, bias, training ? dropout_ : 0.0, false, scale_);
#endif
  const auto scores = torch::matmul(q * scale_, k.transpose(-1, -2));
  return attention_probs_matmul(scores, bias, v, dropout_, training);
}

Gemma3MlpImpl::Gemma3MlpImpl(const BertConfig& c) {
  gate_proj = register_module("gate_proj", LoraLinear(c.hidden_size, c.intermediate_size, false));
  up_proj = register_module("up_proj", LoraLinear(c.hidden_size, c.intermediate_size, false));
  down_proj = register_module("down_proj", LoraLinear(c.intermediate_size, c.hidden_size, false));
}

torch::Tensor Gemma3MlpImpl::forward(const torch::Tensor& x) {
  return down_proj(torch::gelu(gate_proj(x), "tanh") * up_proj(x));
}

Gemma3LayerImpl::Gemma3LayerImpl(const BertConfig& c, int64_t index) {
  self_attn = register_module("self_attn", Gemma3Attention(c, c.sliding_layer(index)));
  mlp = register_module("mlp", Gemma3Mlp(c));
  const auto norm = [&](const char* name) {
    return register_module(name, Gemma3RmsNorm(c.hidden_size, c.layer_norm_eps));
  };
  input_layernorm = norm("input_layernorm");
  post_attention_layernorm = norm("post_attention_layernorm");
  pre_feedforward_layernorm = norm("pre_feedforward_layernorm");
  post_feedforward_layernorm = norm("post_feedforward_layernorm");
}

torch::Tensor Gemma3LayerImpl::forward(const torch::Tensor& hidden, const ModernBertBatch& batch) {
  const auto h = hidden + post_attention_layernorm(self_attn(input_layernorm(hidden), batch));
  return h + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(h)));
}

Gemma3::Gemma3(torch::nn::Module& owner, const BertConfig& config) : config_(config) {
  embed_tokens = owner.register_module(
      "embed_tokens",
      torch::nn::Embedding(
          torch::nn::EmbeddingOptions(config.vocab_size, config.hidden_size).padding_idx(config.pad_token_id)));
  layers = owner.register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) layers->push_back(Gemma3Layer(config, i));
  norm = owner.register_module("norm", Gemma3RmsNorm(config.hidden_size, config.layer_norm_eps));
}

torch::Tensor Gemma3::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask, AttentionImpl impl,
                              bool checkpoint) {
  const Gemma3Options& g = config_.gemma3;
  auto batch = std::make_shared<ModernBertBatch>();
  batch->mask = attention_mask;
  batch->half_window = config_.half_window();
  batch->length = input_ids.size(1);
  batch->head_dim = g.head_dim;
  batch->global_theta = g.rope_theta;
  batch->local_theta = g.rope_local_theta;
  batch->device = input_ids.device();
  batch->impl = impl;
  // Gemma3TextScaledWordEmbedding: the scale rounded to the weights' dtype first.
  const auto weights = embed_tokens->weight;
  auto hidden = embed_tokens(input_ids) *
                torch::scalar_tensor(std::sqrt(static_cast<double>(config_.hidden_size)), weights.options());
  const auto run = [batch](Gemma3LayerImpl& layer, const torch::Tensor& h) { return layer.forward(h, *batch); };
  return norm(run_layers<Gemma3LayerImpl>(layers, hidden, checkpoint, run));
}

void Gemma3::reset_parameters_hf() {
  torch::NoGradGuard no_grad;
  const double std = config_.initializer_range;
  embed_tokens->weight.normal_(0.0, std);
  embed_tokens->weight[config_.pad_token_id].zero_();
  std::vector<Gemma3RmsNorm> norms = {norm};
  for (const auto& item : *layers) {
    auto* layer = item->as<Gemma3LayerImpl>();
    for (LoraLinear* linear :
         {&layer->self_attn->q_proj, &layer->self_attn->k_proj, &layer->self_attn->v_proj, &layer->self_attn->o_proj,
          &layer->mlp->gate_proj, &layer->mlp->up_proj, &layer->mlp->down_proj}) {
      (*linear)->weight.normal_(0.0, std);
      if ((*linear)->bias.defined()) (*linear)->bias.zero_();
    }
    norms.insert(norms.end(), {layer->self_attn->q_norm, layer->self_attn->k_norm, layer->input_layernorm,
                               layer->post_attention_layernorm, layer->pre_feedforward_layernorm,
                               layer->post_feedforward_layernorm});
  }
  for (auto& n : norms) n->weight.zero_();
}

}  // namespace ragmig::model
