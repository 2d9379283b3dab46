// Pooling and the two towers. Pooling runs in float32 whatever the autocast dtype of the towers, because
// a bf16 sum over hundreds of tokens loses the precision that a cosine similarity then depends on.
#include "model/dual_encoder.h"

#include <cmath>

#include "model/host_copy.h"

namespace ragmig::model {

torch::Tensor pool(const torch::Tensor& hidden, const torch::Tensor& attention_mask, Pooling pooling) {
  // At least float32 (bf16 under autocast is widened; float64, used by exactness tests, is kept).
  const auto dtype = at::promote_types(hidden.scalar_type(), torch::kFloat);
  auto h = hidden.to(dtype);
  if (pooling == Pooling::Cls) return h.select(1, 0);
  if (pooling == Pooling::LastToken) {  // the last token of each row wherever the padding is (the first of none)
    const auto columns = torch::arange(h.size(1), attention_mask.options().dtype(torch::kLong));
    const auto last = (columns * (attention_mask != 0)).amax(1);  // [B]
    return h.gather(1, last.view({-1, 1, 1}).expand({h.size(0), 1, h.size(2)})).squeeze(1);
  }
  const auto real = (attention_mask != 0).unsqueeze(-1);  // [B,L,1]
  if (pooling == Pooling::Max) return h.masked_fill(real.logical_not(), -INFINITY).amax(1);
  auto weights = real.to(dtype);
  auto sum = (h * weights).sum(1);
  auto count = weights.sum(1).clamp_min(1.0);
  return pooling == Pooling::Mean ? sum / count : sum / count.sqrt();
}

DualEncoderImpl::DualEncoderImpl(const EncoderSpec& spec) : spec_(spec) {
  query_ = register_module("query", BertModel(spec_.bert));
  if (!spec_.shared_towers) passage_ = register_module("passage", BertModel(spec_.bert));
  for (size_t i = 0; i < spec_.dense.size(); ++i) {
    const std::string suffix = i == 0 ? "" : std::to_string(i + 1);  // "query_dense", "query_dense2", ...
    query_dense_.push_back(register_module("query_dense" + suffix, Dense(spec_.dense[i])));
    if (!spec_.shared_towers)
      passage_dense_.push_back(register_module("passage_dense" + suffix, Dense(spec_.dense[i])));
  }
}

torch::Tensor DualEncoderImpl::project(const torch::Tensor& pooled, bool passage) {
  torch::Tensor y = pooled;
  // Each layer's own dtype in (bf16 when the model is, float32 under autocast, which then computes in bf16),
  // at least float32 out, as pooling gives.
  for (Dense dense : passage ? passage_dense() : query_dense())
    y = dense->forward(y.to(dense->parameters().front().scalar_type()));
  return y.to(at::promote_types(y.scalar_type(), torch::kFloat));
}

torch::Tensor DualEncoderImpl::encode(bool passage, const torch::Tensor& ids, const torch::Tensor& mask) {
  BertModel tower = passage ? passage_tower() : query_;
  return embedding(tower->forward(ids, mask), mask, passage);  // a mask on the host spares the tower a GPU wait
}

torch::Tensor DualEncoderImpl::embedding(const torch::Tensor& hidden, const torch::Tensor& mask, bool passage) {
  auto pooled = project(pool(hidden, to_device_without_waiting(mask, hidden.device()), spec_.pooling), passage);
  if (!spec_.normalize) return pooled;
  namespace F = torch::nn::functional;
  return F::normalize(pooled, F::NormalizeFuncOptions().p(2).dim(1).eps(1e-12));
}

std::pair<torch::Tensor, torch::Tensor> DualEncoderImpl::encode_pair(const torch::Tensor& q_ids,
                                                                     const torch::Tensor& q_mask,
                                                                     const torch::Tensor& p_ids,
                                                                     const torch::Tensor& p_mask) {
  if (passage_) return {encode_queries(q_ids, q_mask), encode_passages(p_ids, p_mask)};
  const auto [q_hidden, p_hidden] = query_->forward_pair(q_ids, q_mask, p_ids, p_mask);
  return {embedding(q_hidden, q_mask, false), embedding(p_hidden, p_mask, true)};
}

torch::Tensor DualEncoderImpl::encode_queries(const torch::Tensor& ids, const torch::Tensor& mask) {
  return encode(false, ids, mask);
}

torch::Tensor DualEncoderImpl::encode_passages(const torch::Tensor& ids, const torch::Tensor& mask) {
  return encode(true, ids, mask);
}

DualEncoder with_dense_layer(DualEncoder& net, const DenseConfig& dense) {
  TORCH_CHECK(net->spec().dense.empty(), "with_dense_layer: the model has a Dense layer already");
  EncoderSpec spec = net->spec();
  spec.dense = {dense};
  DualEncoder out(spec);
  torch::NoGradGuard no_grad;
  auto params = out->named_parameters();
  for (const auto& p : net->named_parameters()) params[p.key()].copy_(p.value());
  auto buffers = out->named_buffers();
  for (const auto& b : net->named_buffers()) buffers[b.key()].copy_(b.value());
  return out;
}

}  // namespace ragmig::model
