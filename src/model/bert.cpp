// The BERT math, kept close to Hugging Face's modeling_bert.py (same operation order: scores are divided
// by sqrt(head_dim) after the matmul, the mask is added, then softmax) so that outputs agree with HF to
// float rounding, which tests/model/bert_reference.py checks.
#include "model/bert.h"

#include <ATen/autocast_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "core/error.h"
#include "model/activation_checkpoint.h"
#include "model/attention_probs.h"
#include "model/autocast_state.h"
#include "model/decoder.h"
#include "model/gemma3.h"
#include "model/host_copy.h"
#include "model/keyed_dropout.h"
#include "model/modernbert.h"
#include "model/varlen_attention.h"

namespace ragmig::model {
namespace {

torch::nn::Embedding make_embedding(int64_t rows, int64_t dim) {
  return torch::nn::Embedding(torch::nn::EmbeddingOptions(rows, dim));
}

torch::nn::LayerNorm make_layer_norm(const BertConfig& c) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden_size}).eps(c.layer_norm_eps));
}

bool reduced(const torch::Tensor& x) { return x.scalar_type() == torch::kBFloat16 || x.scalar_type() == torch::kHalf; }

// A residual sum's LayerNorm in the sum's own dtype. An fp32 sum (autocast's stream: a bf16 product plus an fp32
// residual; an fp32 model's) takes the plain LayerNorm. A bf16 one (a bf16 model's, in evaluation; the stream of
// set_bf16_residual under autocast, whose fp32 policy for LayerNorm on CUDA would widen it again) stays bf16, the
// weights cast to it as a bf16 model holds them; the kernel still reduces in fp32.
torch::Tensor layer_norm(torch::nn::LayerNorm& ln, const torch::Tensor& x) {
  if (!reduced(x)) return ln(x);
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const auto& o = ln->options;
  return torch::layer_norm(x, o.normalized_shape(), ln->weight.to(x.scalar_type()), ln->bias.to(x.scalar_type()),
                           o.eps());
}

// The dtype autocast computes in on `device`'s type, if it is on there.
std::optional<at::ScalarType> autocast_dtype(const torch::Device& device) {
  const AutocastState autocast = autocast_state(device);
  return autocast.enabled ? std::optional(autocast.dtype) : std::nullopt;
}

}  // namespace

bool fused_attention_available() {
#if TORCH_VERSION_MAJOR >= 2
  return true;
#else
  return false;
#endif
}

torch::Tensor relative_position_buckets(int64_t length, int64_t num_buckets, int64_t max_distance,
                                        torch::Device device) {
  const auto positions = torch::arange(length, torch::TensorOptions().dtype(torch::kLong).device(device));
  const auto relative = positions.unsqueeze(0) - positions.unsqueeze(1);  // (i, j): j - i
  const int64_t half = num_buckets / 2, max_exact = half / 2;
  auto n = -relative;
  auto bucket = (n < 0).to(torch::kLong) * half;
  n = n.abs();
  // As HF (and T5): log(n / max_exact) / log(max_distance / max_exact) * (half - max_exact), in float32 (the
  // Python scalars become float32 operands), truncated; n < max_exact never takes this branch.
  auto large = max_exact + (torch::log(n.to(torch::kFloat) / max_exact) /
                            std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)) *
                            static_cast<double>(half - max_exact))
                               .to(torch::kLong);
  large = torch::clamp_max(large, half - 1);
  return bucket + torch::where(n < max_exact, n, large);
}

const torch::Tensor& AttentionBatch::score_bias(torch::ScalarType dtype, const torch::Device& device) const {
  if (score_bias_cache.defined() && score_bias_cache.scalar_type() == dtype) return score_bias_cache;
  auto bias = additive_attention_mask(to_device_without_waiting(mask, device), dtype);
  // The padding mask's lowest value plus a bias rounds back to the lowest value: masked stays masked.
  if (position_bias.defined()) bias = position_bias.to(dtype) + bias;
  score_bias_cache = bias;
  return score_bias_cache;
}

torch::Tensor lowest_finite(torch::ScalarType dtype, torch::Device device) {
  auto lowest = torch::full({}, 0.0, torch::TensorOptions().dtype(dtype).device(device));
  // What torch.finfo(dtype).min gives in Python.
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "lowest_finite", [&] {
    lowest.fill_(std::numeric_limits<scalar_t>::lowest());
  });
  return lowest;
}

torch::Tensor additive_attention_mask(const torch::Tensor& attention_mask, torch::ScalarType dtype) {
  const auto b = attention_mask.size(0), l = attention_mask.size(1);
  auto masked = (attention_mask == 0).view({b, 1, 1, l});
  const auto lowest = lowest_finite(dtype, attention_mask.device());
  return torch::zeros({b, 1, 1, l}, lowest.options()).masked_fill(masked, lowest);
}

BertEmbeddingsImpl::BertEmbeddingsImpl(const BertConfig& c) : dropout_(c.hidden_dropout_prob) {
  // padding_idx keeps the padding row's gradient at zero, as HF's nn.Embedding(padding_idx=pad) does.
  word_embeddings = register_module(
      "word_embeddings",
      torch::nn::Embedding(torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(c.pad_token_id)));
  position_embeddings = register_module("position_embeddings", make_embedding(c.max_position_embeddings, c.hidden_size));
  if (c.type_vocab_size > 0)
    token_type_embeddings = register_module("token_type_embeddings", make_embedding(c.type_vocab_size, c.hidden_size));
  LayerNorm = register_module("LayerNorm", make_layer_norm(c));
}

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                          const torch::Tensor& positions) {
  auto x = word_embeddings(input_ids);
  if (token_type_embeddings) x = x + token_type_embeddings(token_type_ids);
  x = x + position_embeddings(positions);
  x = LayerNorm(x);
  return model::keyed_dropout(x, dropout_, is_training());
}

BertSelfAttentionImpl::BertSelfAttentionImpl(const BertConfig& c)
    : heads_(c.num_attention_heads), head_dim_(c.hidden_size / c.num_attention_heads),
      dropout_(c.attention_probs_dropout_prob) {
  query = register_module("query", LoraLinear(c.hidden_size, c.hidden_size));
  key = register_module("key", LoraLinear(c.hidden_size, c.hidden_size));
  value = register_module("value", LoraLinear(c.hidden_size, c.hidden_size));
}

namespace {

// The padded attention: q, k, v [B, L, H] -> context [B, L, H], the scores biased by batch.score_bias.
torch::Tensor padded_attention(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                               const AttentionBatch& batch, int64_t heads, int64_t head_dim, double dropout,
                               bool training) {
  const auto b = q_in.size(0), l = q_in.size(1);
  auto split = [&](const torch::Tensor& x) { return x.view({b, l, heads, head_dim}).transpose(1, 2); };
  auto q = split(q_in), k = split(k_in), v = split(v_in);
  torch::Tensor context;
#if TORCH_VERSION_MAJOR >= 2
  // With dropout on the probabilities, LibTorch's CPU attention falls back to its plain path with a bernoulli_
  // mask: the plain path below is the same computation with model/keyed_dropout.h's masks.
  const bool cpu_dropout = training && dropout > 0 && q.device().is_cpu();
  if (batch.impl == AttentionImpl::Fused && !cpu_dropout)
    context = at::scaled_dot_product_attention(q, k, v, batch.score_bias(q.scalar_type(), q.device()),
                                               training ? dropout : 0.0, false);
#endif
  if (!context.defined()) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
    const auto& bias = batch.score_bias(q.scalar_type(), q.device());
    if (model::blocked_attention_takes(q, k, v, bias)) {
      context = model::blocked_attention(q, k, v, bias, scale, dropout, training);
    } else {
      // The scale goes on q ([B, heads, L, d]) as SDPA's own math path puts it, not on the scores ([.., L, L], L/d
      // times bigger): a pass less over the scores forward and backward.
      const auto scores = torch::matmul(q * scale, k.transpose(-1, -2));
      context = model::attention_probs_matmul(scores, bias, v, dropout, training);
    }
  }
  return context.transpose(1, 2).contiguous().view({b, l, heads * head_dim});
}

}  // namespace

std::array<torch::Tensor, 3> BertSelfAttentionImpl::project(const torch::Tensor& hidden) {
  // One matmul over the three weights: a wider product; under autocast one cast of `hidden` instead of three, and
  // in backward one gradient for it instead of three summed in fp32 (on a GPU those casts and sums cost as much as
  // the products: bench/train/gpu.sh's profile). Embeddings match transformers' as closely as three products did.
  // Each layer's own weight, or its routed adapter's merged into it (LoraLinearImpl::product_weight).
  const auto weight =
      torch::cat({query->product_weight(hidden), key->product_weight(hidden), value->product_weight(hidden)});
  const auto bias = torch::cat({query->bias, key->bias, value->bias});
  const auto parts = torch::linear(hidden, weight, bias).chunk(3, -1);
  return {query->adapt(hidden, parts[0]), key->adapt(hidden, parts[1]), value->adapt(hidden, parts[2])};
}

torch::Tensor BertSelfAttentionImpl::forward(const torch::Tensor& hidden, const AttentionBatch& batch) {
  auto [q, k, v] = project(hidden);
  return attend(q, k, v, batch);
}

torch::Tensor BertSelfAttentionImpl::attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                            const AttentionBatch& batch) {
  const double dropout = is_training() ? dropout_ : 0.0;
  if (!batch.packed) return padded_attention(q, k, v, batch, heads_, head_dim_, dropout_, is_training());
  const Packing& p = *batch.packed;
  const auto n = q.size(0);
  if (batch.impl == AttentionImpl::Fused && !batch.position_bias.defined()) {  // flash attention takes no bias
    auto split = [&](const torch::Tensor& x) { return x.view({n, heads_, head_dim_}); };
    auto context = varlen_attention(split(q), split(k), split(v), p, dropout);
    if (context.defined()) return context.reshape({n, heads_ * head_dim_});
  }
  if (!batch.parts.empty())  // each part padded to its own length, not to the longest part's
    return cat_over_parts(batch.parts, [&](const AttentionBatch& part, int64_t begin, int64_t tokens) {
      return attend(q.narrow(0, begin, tokens), k.narrow(0, begin, tokens), v.narrow(0, begin, tokens), part);
    });
  return pack(padded_attention(unpack(q, p), unpack(k, p), unpack(v, p), batch, heads_, head_dim_, dropout_,
                               is_training()),
              p);
}

BertResidualOutputImpl::BertResidualOutputImpl(int64_t in_features, const BertConfig& c)
    : dropout_(c.hidden_dropout_prob) {
  dense = register_module("dense", LoraLinear(in_features, c.hidden_size));
  LayerNorm = register_module("LayerNorm", make_layer_norm(c));
}

torch::Tensor BertResidualOutputImpl::forward(const torch::Tensor& x, const torch::Tensor& residual) {
  return layer_norm(LayerNorm, model::keyed_dropout(dense(x), dropout_, is_training()) + residual);
}

BertAttentionImpl::BertAttentionImpl(const BertConfig& c) {
  self = register_module("self", BertSelfAttention(c));
  output = register_module("output", BertResidualOutput(c.hidden_size, c));
}

torch::Tensor BertAttentionImpl::forward(const torch::Tensor& hidden, const AttentionBatch& batch) {
  return output(self->forward(hidden, batch), hidden);
}

BertIntermediateImpl::BertIntermediateImpl(const BertConfig& c) : relu_(c.hidden_act == "relu") {
  dense = register_module("dense", LoraLinear(c.hidden_size, c.intermediate_size));
}

torch::Tensor BertIntermediateImpl::forward(const torch::Tensor& x) {
  auto h = dense(x);
  // Without autograd (evaluation, GradCache's first pass) the activation overwrites h: one intermediate-sized
  // buffer less per layer, the same numbers. gelu's default is the exact erf form, as HF's "gelu".
  if (!h.requires_grad()) return relu_ ? h.relu_() : at::gelu_(h);
  return relu_ ? torch::relu(h) : torch::gelu(h);
}

BertLayerImpl::BertLayerImpl(const BertConfig& c) {
  attention = register_module("attention", BertAttention(c));
  intermediate = register_module("intermediate", BertIntermediate(c));
  output = register_module("output", BertResidualOutput(c.intermediate_size, c));
}

torch::Tensor BertLayerImpl::forward(const torch::Tensor& hidden, const AttentionBatch& batch) {
  auto a = attention->forward(hidden, batch);
  return output(intermediate(a), a);
}

BertEncoderImpl::BertEncoderImpl(const BertConfig& c) {
  layer = register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer->push_back(BertLayer(c));
  if (c.mpnet())
    relative_attention_bias = register_module("relative_attention_bias",
                                              make_embedding(c.relative_attention_num_buckets, c.num_attention_heads));
}

torch::Tensor BertEncoderImpl::forward(torch::Tensor hidden, AttentionBatch batch, bool checkpoint) {
  // MPNet's compute_position_bias: positions 0..L-1 whatever the padding, one bias for all layers, 32 buckets
  // (its default argument, which HF's encoder never overrides with the config's number).
  torch::Tensor buckets;
  if (relative_attention_bias) buckets = relative_position_buckets(batch.mask.size(1), 32, 128, hidden.device());
  std::shared_ptr<torch::nn::EmbeddingImpl> bias;  // MPNet's table, or none
  if (relative_attention_bias) bias = relative_attention_bias.ptr();
  const auto position_bias = [bias, buckets] {
    return bias ? bias->forward(buckets).permute({2, 0, 1}).unsqueeze(0) : torch::Tensor();
  };
  if (!checkpoint) {
    batch.position_bias = position_bias();
    for (const auto& m : *layer) hidden = m->as<BertLayerImpl>()->forward(hidden, batch);
    return hidden;
  }
  // Each layer on its own copy of the batch: its score bias (and MPNet's position bias, a product of a parameter)
  // built inside the layer, so the replay builds them into the graph it backpropagates through.
  const auto shared = std::make_shared<const AttentionBatch>(std::move(batch));
  const auto bias_weights =
      relative_attention_bias ? trainable_parameters(*relative_attention_bias) : std::vector<torch::Tensor>{};
  for (const std::shared_ptr<torch::nn::Module>& module : *layer) {
    auto params = trainable_parameters(*module);
    params.insert(params.end(), bias_weights.begin(), bias_weights.end());
    const auto run = [module, shared, position_bias](const torch::Tensor& h) {
      AttentionBatch own = *shared;
      own.position_bias = position_bias();
      return module->as<BertLayerImpl>()->forward(h, own);
    };
    hidden = checkpointed(run, hidden, params);
  }
  return hidden;
}

BertModelImpl::BertModelImpl(const BertConfig& config) : config_(config) {
  config_.validate();
  if (config_.is_modernbert()) {
    modern_ = std::make_shared<ModernBert>(*this, config_);
  } else if (config_.is_decoder()) {
    decoder_ = std::make_shared<Decoder>(*this, config_);
  } else if (config_.is_gemma3()) {
    gemma3_ = std::make_shared<Gemma3>(*this, config_);
  } else {
    embeddings = register_module("embeddings", BertEmbeddings(config_));
    encoder = register_module("encoder", BertEncoder(config_));
  }
  attention_impl_ = fused_attention_available() ? AttentionImpl::Fused : AttentionImpl::Manual;
  reset_parameters_hf();
}

void BertModelImpl::set_attention_impl(AttentionImpl impl) {
  attention_impl_ = fused_attention_available() ? impl : AttentionImpl::Manual;
}

void BertModelImpl::reset_parameters_hf() {
  if (modern_) return modern_->reset_parameters_hf();
  if (decoder_) return decoder_->reset_parameters_hf();
  if (gemma3_) return gemma3_->reset_parameters_hf();
  torch::NoGradGuard no_grad;
  for (auto& p : named_parameters()) {
    auto& t = p.value();
    const auto& name = p.key();
    if (t.dim() == 2) {
      t.normal_(0.0, config_.initializer_range);  // Linear and Embedding weights
    } else if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) {
      t.zero_();
    } else {
      t.fill_(1.0);  // LayerNorm weights: the only 1-d weights in BERT
    }
  }
  embeddings->word_embeddings->weight[config_.pad_token_id].zero_();
}

torch::Tensor BertModelImpl::checked_ids(const torch::Tensor& input_ids, const torch::Tensor& attention_mask) const {
  if (input_ids.dim() != 2) throw DataError("BERT input_ids must be [batch, length], got " + std::to_string(input_ids.dim()) + " dims");
  if (!attention_mask.defined() || attention_mask.sizes() != input_ids.sizes())
    throw DataError("BERT attention_mask must have the shape of input_ids");
  if (input_ids.size(1) > config_.max_tokens())
    throw DataError("sequence length " + std::to_string(input_ids.size(1)) + " exceeds the model's " +
                    std::to_string(config_.max_tokens()) + " positions (max_position_embeddings)");
  if (at::isFloatingType(input_ids.scalar_type())) throw DataError("BERT input_ids must be integers");
  return input_ids.to(torch::kLong);
}

torch::Tensor BertModelImpl::residual_stream(const torch::Tensor& embedded) const {
  if (!bf16_residual_ || embedded.scalar_type() != torch::kFloat) return embedded;
  const auto low = autocast_dtype(embedded.device());
  return low ? embedded.to(*low) : embedded;
}

torch::Tensor BertModelImpl::positions(const torch::Tensor& ids) const {
  return torch::arange(ids.size(1), ids.options()).add_(config_.position_offset()).unsqueeze(0);
}

torch::Tensor BertModelImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                                     const torch::Tensor& token_type_ids) {
  auto ids = checked_ids(input_ids, attention_mask);
  const bool checkpoint = checkpoint_layers_ && is_training();
  if (modern_) return modern_->forward(ids, attention_mask, attention_impl_, unpad_, checkpoint);
  // Padded on the right: causal attention needs no mask.
  if (decoder_) return decoder_->forward(ids, attention_impl_, checkpoint);
  if (gemma3_) return gemma3_->forward(ids, attention_mask, attention_impl_, checkpoint);
  torch::Tensor types;
  if (token_type_ids.defined()) {
    if (token_type_ids.sizes() != input_ids.sizes()) throw DataError("BERT token_type_ids must have the shape of input_ids");
    types = token_type_ids.to(torch::kLong);
  } else {
    types = torch::zeros_like(ids);
  }
  AttentionBatch batch;
  batch.mask = attention_mask;
  batch.impl = attention_impl_;
  if (!unpad_) return encoder->forward(residual_stream(embeddings(ids, types, positions(ids))), batch, checkpoint);
  // The packing made where the mask lies: no wait for the GPU from a host mask.
  batch.packed = std::make_shared<const Packing>(make_packing(attention_mask, ids.device()));
  const Packing& packing = *batch.packed;
  auto hidden = residual_stream(
      embeddings(pack(ids, packing), pack(types, packing), pack(positions(ids).expand_as(ids), packing)));
  return unpack(encoder->forward(hidden, batch, checkpoint), packing);
}

std::pair<torch::Tensor, torch::Tensor> BertModelImpl::forward_pair(const torch::Tensor& ids_a,
                                                                    const torch::Tensor& mask_a,
                                                                    const torch::Tensor& ids_b,
                                                                    const torch::Tensor& mask_b) {
  if (!joins_batches()) return {forward(ids_a, mask_a), forward(ids_b, mask_b)};
  const auto a = checked_ids(ids_a, mask_a), b = checked_ids(ids_b, mask_b);
  const bool checkpoint = checkpoint_layers_ && is_training();
  if (modern_) return modern_->forward_pair(a, mask_a, b, mask_b, attention_impl_, checkpoint);
  // The packings made where the masks lie (the host, in training: no wait for the GPU), then copied.
  const auto packed = std::make_shared<const PackedPair>(make_packed_pair(mask_a, mask_b, a.device()));
  AttentionBatch batch;
  batch.impl = attention_impl_;
  batch.packed = std::shared_ptr<const Packing>(packed, &packed->joint);
  for (const auto& [mask, packing] : {std::pair{&mask_a, &packed->a}, std::pair{&mask_b, &packed->b}}) {
    AttentionBatch& part = batch.parts.emplace_back();
    part.mask = *mask;
    part.packed = std::shared_ptr<const Packing>(packed, packing);
    part.impl = attention_impl_;
  }
  const auto ids = pack_pair(a, b, *packed);
  const auto hidden = residual_stream(embeddings(
      ids, torch::zeros_like(ids), pack_pair(positions(a).expand_as(a), positions(b).expand_as(b), *packed)));
  return unpack_pair(encoder->forward(hidden, batch, checkpoint), *packed);
}

}  // namespace ragmig::model
