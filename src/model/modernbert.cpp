// The ModernBERT math, in the operation order of transformers' modeling_modernbert.py (rotations in float32,
// scores scaled after the product then masked), so outputs agree with it to float rounding (tests/hf).
#include "model/modernbert.h"

#include <cmath>

#include "model/activation_checkpoint.h"
#include "model/attention_probs.h"
#include "model/host_copy.h"
#include "model/keyed_dropout.h"
#include "model/local_attention.h"
#include "model/varlen_attention.h"

namespace ragmig::model {

BiasOptionalLayerNormImpl::BiasOptionalLayerNormImpl(int64_t size, double eps, bool with_bias)
    : size_(size), eps_(eps) {
  weight = register_parameter("weight", torch::ones({size}));
  if (with_bias) bias = register_parameter("bias", torch::zeros({size}));
}

torch::Tensor BiasOptionalLayerNormImpl::forward(const torch::Tensor& x) {
  return torch::layer_norm(x, {size_}, weight, bias, eps_);
}

torch::Tensor sliding_window_mask(const torch::Tensor& attention_mask, int64_t half_window, torch::ScalarType dtype) {
  const auto l = attention_mask.size(1);
  const auto positions = torch::arange(l, attention_mask.options().dtype(torch::kLong));
  const auto outside = (positions.unsqueeze(0) - positions.unsqueeze(1)).abs().gt(half_window).view({1, 1, l, l});
  const auto lowest = lowest_finite(dtype, attention_mask.device());
  return torch::where(outside, lowest, additive_attention_mask(attention_mask, dtype));  // [B, 1, L, L]
}

const torch::Tensor& ModernBertBatch::mask_on_device() const {
  if (!device_mask_cache.defined()) device_mask_cache = to_device_without_waiting(mask, device);
  return device_mask_cache;
}

const torch::Tensor& ModernBertBatch::score_bias(bool sliding, torch::ScalarType dtype) const {
  torch::Tensor& cache = sliding ? sliding_bias_cache : global_bias_cache;
  if (!cache.defined() || cache.scalar_type() != dtype)
    cache = sliding ? sliding_window_mask(mask_on_device(), half_window, dtype)
                    : additive_attention_mask(mask_on_device(), dtype);
  return cache;
}

const torch::Tensor& ModernBertBatch::local_block_bias(torch::ScalarType dtype) const {
  if (!local_block_bias_cache.defined() || local_block_bias_cache.scalar_type() != dtype)
    local_block_bias_cache = model::local_block_bias(mask_on_device(), half_window, dtype);
  return local_block_bias_cache;
}

torch::Tensor ModernBertBatch::attention(
    const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, bool sliding,
    const std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                                      const torch::Tensor&)>& attend) const {
  const auto b = q.size(0), l = q.size(2);
  if (!sliding || !local_blocks_pay(l, half_window)) return attend(q, k, v, score_bias(sliding, q.scalar_type()));
  const int64_t w = half_window;
  return from_query_blocks(
      attend(query_blocks(q, w), key_blocks(k, w), key_blocks(v, w), local_block_bias(q.scalar_type())), b, l);
}

const RotaryTables& ModernBertBatch::rotary(bool sliding) const {
  RotaryTables& cache = sliding ? local_cache : global_cache;
  if (!cache.cos.defined()) cache = rotary_tables(length, head_dim, sliding ? local_theta : global_theta, device);
  return cache;
}

const RotaryTables& ModernBertBatch::packed_rotary(bool sliding) const {
  RotaryTables& cache = sliding ? packed_local_cache : packed_global_cache;
  if (!cache.cos.defined()) cache = packed_rotary_tables(rotary(sliding), *packed);
  return cache;
}

ModernBertEmbeddingsImpl::ModernBertEmbeddingsImpl(const BertConfig& c) : dropout_(c.modernbert.embedding_dropout) {
  tok_embeddings = register_module(
      "tok_embeddings",
      torch::nn::Embedding(torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(c.pad_token_id)));
  norm = register_module("norm", BiasOptionalLayerNorm(c.hidden_size, c.layer_norm_eps, c.modernbert.norm_bias));
}

torch::Tensor ModernBertEmbeddingsImpl::forward(const torch::Tensor& input_ids) {
  return keyed_dropout(norm(tok_embeddings(input_ids)), dropout_, is_training());
}

ModernBertAttentionImpl::ModernBertAttentionImpl(const BertConfig& c, bool sliding)
    : heads_(c.num_attention_heads), head_dim_(c.hidden_size / c.num_attention_heads),
      dropout_(c.attention_probs_dropout_prob), sliding_(sliding) {
  const bool bias = c.modernbert.attention_bias;
  Wqkv = register_module("Wqkv", LoraLinear(c.hidden_size, 3 * c.hidden_size, bias));
  Wo = register_module("Wo", LoraLinear(c.hidden_size, c.hidden_size, bias));
}

torch::Tensor ModernBertAttentionImpl::forward(const torch::Tensor& hidden, const ModernBertBatch& batch) {
  return keyed_dropout(Wo(context(Wqkv(hidden), batch)), dropout_, is_training());
}

torch::Tensor ModernBertAttentionImpl::context(const torch::Tensor& projected, const ModernBertBatch& batch) {
  torch::Tensor context;
  if (batch.packed) context = packed_context(projected, batch);
  if (context.defined()) return context;
  if (batch.parts.empty()) return padded_context(projected, batch);
  // Each part padded to its own length, not to the longest part's.
  return cat_over_parts(batch.parts, [&](const ModernBertBatch& part, int64_t begin, int64_t tokens) {
    return padded_context(projected.narrow(0, begin, tokens), part);
  });
}

torch::Tensor ModernBertAttentionImpl::packed_context(const torch::Tensor& projected, const ModernBertBatch& batch) {
  // What varlen_attention declines at once, before rotating q and k for it: not on a GPU, or not fp16 / bf16.
  const auto dtype = projected.scalar_type();
  const bool half = dtype == torch::kHalf || dtype == torch::kBFloat16;
  if (batch.impl != AttentionImpl::Fused || !projected.is_cuda() || !half) return {};
  const auto n = projected.size(0);
  const auto qkv = projected.view({n, 3, heads_, head_dim_}).unbind(1);  // q, k, v [N, heads, head_dim]
  const RotaryTables& rotary = batch.packed_rotary(sliding_);
  const auto context = varlen_attention(apply_rotary(qkv[0], rotary), apply_rotary(qkv[1], rotary), qkv[2],
                                        *batch.packed, is_training() ? dropout_ : 0.0,
                                        sliding_ ? std::optional<int64_t>(batch.half_window) : std::nullopt);
  return context.defined() ? context.reshape({n, heads_ * head_dim_}) : context;
}

torch::Tensor ModernBertAttentionImpl::padded_context(const torch::Tensor& projected, const ModernBertBatch& batch) {
  const auto rows = batch.packed ? unpack(projected, *batch.packed) : projected;  // the attention needs the rows
  const auto b = rows.size(0), l = rows.size(1);
  // [B, L, 3, heads, head_dim] -> q, k, v [B, heads, L, head_dim]
  const auto qkv = rows.view({b, l, 3, heads_, head_dim_}).permute({2, 0, 3, 1, 4});
  const RotaryTables& rotary = batch.rotary(sliding_);
  const auto q = apply_rotary(qkv[0], rotary), k = apply_rotary(qkv[1], rotary);
  const auto v = qkv[2];
  const auto context =
      batch.attention(q, k, v, sliding_, [&](const auto& qs, const auto& ks, const auto& vs, const auto& bias) {
        return attend(qs, ks, vs, bias, batch.impl);
      });
  const auto merged = context.transpose(1, 2).reshape({b, l, heads_ * head_dim_});
  return batch.packed ? pack(merged, *batch.packed) : merged;
}

torch::Tensor ModernBertAttentionImpl::attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                              const torch::Tensor& bias, AttentionImpl impl) {
  const bool training = is_training();
#if TORCH_VERSION_MAJOR >= 2
  // As BERT's attention (bert.cpp): on a CPU with dropout, the plain path with keyed_dropout's masks.
  const bool cpu_dropout = training && dropout_ > 0 && q.device().is_cpu();
  if (impl == AttentionImpl::Fused && !cpu_dropout)
    return at::scaled_dot_product_attention(q, k, v, bias, training ? dropout_ : 0.0, false);
#endif
  // The scale on q, as BERT's plain attention (bert.cpp).
  const auto scores = torch::matmul(q * (1.0 / std::sqrt(static_cast<double>(head_dim_))), k.transpose(-1, -2));
  return attention_probs_matmul(scores, bias, v, dropout_, training);
}

ModernBertMlpImpl::ModernBertMlpImpl(const BertConfig& c)
    : relu_(c.hidden_act == "relu"), dropout_(c.hidden_dropout_prob) {
  const bool bias = c.modernbert.mlp_bias;
  Wi = register_module("Wi", LoraLinear(c.hidden_size, 2 * c.intermediate_size, bias));
  Wo = register_module("Wo", LoraLinear(c.intermediate_size, c.hidden_size, bias));
}

torch::Tensor ModernBertMlpImpl::forward(const torch::Tensor& x) {
  const auto halves = Wi(x).chunk(2, -1);
  const auto act = relu_ ? torch::relu(halves[0]) : torch::gelu(halves[0]);
  return Wo(keyed_dropout(act * halves[1], dropout_, is_training()));
}

ModernBertLayerImpl::ModernBertLayerImpl(const BertConfig& c, int64_t index) {
  const auto make_norm = [&] { return BiasOptionalLayerNorm(c.hidden_size, c.layer_norm_eps, c.modernbert.norm_bias); };
  if (index > 0) attn_norm = register_module("attn_norm", make_norm());
  attn = register_module("attn", ModernBertAttention(c, c.modernbert.sliding_layers[index]));
  mlp_norm = register_module("mlp_norm", make_norm());
  mlp = register_module("mlp", ModernBertMlp(c));
}

torch::Tensor ModernBertLayerImpl::forward(const torch::Tensor& hidden, const ModernBertBatch& batch) {
  auto h = hidden + attn(attn_norm ? attn_norm(hidden) : hidden, batch);
  return h + mlp(mlp_norm(h));
}

ModernBert::ModernBert(torch::nn::Module& owner, const BertConfig& config) : config_(config) {
  embeddings = owner.register_module("embeddings", ModernBertEmbeddings(config));
  layers = owner.register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) layers->push_back(ModernBertLayer(config, i));
  final_norm = owner.register_module(
      "final_norm", BiasOptionalLayerNorm(config.hidden_size, config.layer_norm_eps, config.modernbert.norm_bias));
}

ModernBertBatch ModernBert::batch_of(const torch::Tensor& mask, int64_t length, std::shared_ptr<const Packing> packing,
                                     AttentionImpl impl, const torch::Device& device) const {
  const ModernBertOptions& m = config_.modernbert;
  ModernBertBatch batch;
  batch.mask = mask;
  batch.half_window = m.local_attention / 2;
  batch.length = length;
  batch.head_dim = config_.hidden_size / config_.num_attention_heads;
  batch.global_theta = m.global_rope_theta;
  batch.local_theta = m.local_rope_theta;
  batch.device = device;
  batch.impl = impl;
  batch.packed = std::move(packing);
  return batch;
}

torch::Tensor ModernBert::run(const torch::Tensor& ids, ModernBertBatch batch, bool checkpoint) {
  // Shared: a checkpointed layer's replay reads it (masks and rotary tables built once, none of them a gradient's
  // path) after this pass returned.
  const auto shared = std::make_shared<const ModernBertBatch>(std::move(batch));
  const auto layer = [shared](ModernBertLayerImpl& l, const torch::Tensor& h) { return l.forward(h, *shared); };
  return final_norm(run_layers<ModernBertLayerImpl>(layers, embeddings(ids), checkpoint, layer));
}

torch::Tensor ModernBert::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                                  AttentionImpl impl, bool unpad, bool checkpoint) {
  const auto device = input_ids.device();
  const int64_t length = input_ids.size(1);
  if (!unpad) return run(input_ids, batch_of(attention_mask, length, nullptr, impl, device), checkpoint);
  // The packing made where the mask lies: no wait for the GPU from a host mask.
  const auto packing = std::make_shared<const Packing>(make_packing(attention_mask, device));
  return unpack(run(pack(input_ids, *packing), batch_of(attention_mask, length, packing, impl, device), checkpoint),
                *packing);
}

std::pair<torch::Tensor, torch::Tensor> ModernBert::forward_pair(const torch::Tensor& ids_a,
                                                                 const torch::Tensor& mask_a,
                                                                 const torch::Tensor& ids_b,
                                                                 const torch::Tensor& mask_b, AttentionImpl impl,
                                                                 bool checkpoint) {
  const auto device = ids_a.device();
  // The packings made where the masks lie (the host, in training: no wait for the GPU), then copied.
  const auto packed = std::make_shared<const PackedPair>(make_packed_pair(mask_a, mask_b, device));
  const auto part = [&](const Packing& p) { return std::shared_ptr<const Packing>(packed, &p); };
  ModernBertBatch batch = batch_of({}, packed->joint.length, part(packed->joint), impl, device);
  batch.parts = {batch_of(mask_a, packed->a.length, part(packed->a), impl, device),
                 batch_of(mask_b, packed->b.length, part(packed->b), impl, device)};
  return unpack_pair(run(pack_pair(ids_a, ids_b, *packed), std::move(batch), checkpoint), *packed);
}

namespace {

// nn.init.trunc_normal_(t, 0, std, -2 std, 2 std): normal draws, those outside redrawn until none are.
void truncated_normal_(torch::Tensor t, double std) {
  t.normal_(0.0, std);
  for (auto outside = t.abs() > 2 * std; outside.any().item<bool>(); outside = t.abs() > 2 * std)
    t.masked_scatter_(outside, torch::empty_like(t).normal_(0.0, std).masked_select(outside));
}

}  // namespace

void ModernBert::reset_parameters_hf() {
  torch::NoGradGuard no_grad;
  const double in = config_.initializer_range;
  const double out = in / std::sqrt(2.0 * static_cast<double>(config_.num_hidden_layers));
  const auto init = [](LoraLinear& linear, double std) {
    truncated_normal_(linear->weight, std);
    if (linear->bias.defined()) linear->bias.zero_();
  };
  truncated_normal_(embeddings->tok_embeddings->weight, in);
  std::vector<BiasOptionalLayerNorm> norms = {embeddings->norm, final_norm};
  for (const auto& item : *layers) {
    auto* layer = item->as<ModernBertLayerImpl>();
    init(layer->attn->Wqkv, in);
    init(layer->attn->Wo, out);
    init(layer->mlp->Wi, in);
    init(layer->mlp->Wo, out);
    if (layer->attn_norm) norms.push_back(layer->attn_norm);
    norms.push_back(layer->mlp_norm);
  }
  for (auto& norm : norms) {
    norm->weight.fill_(1.0);
    if (norm->bias.defined()) norm->bias.zero_();
  }
}

}  // namespace ragmig::model
