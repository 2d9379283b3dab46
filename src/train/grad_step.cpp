// Gradient computation for one batch, three ways (see grad_step.h).
#include "train/grad_step.h"

#include <algorithm>
#include <vector>

#include "model/rng_state.h"
#include "train/autocast_guard.h"

namespace ragmig::train {
namespace {

torch::Tensor split_negatives(const torch::Tensor& p_emb, int64_t b) {
  return p_emb.size(0) > b ? p_emb.slice(0, b) : torch::Tensor();
}

// The encoder calls of GradCache's passes, in order: call i embeds the i-th chunk of queries and of passages.
std::vector<std::vector<TowerInput>> chunk_calls(const PairBatch& batch, int64_t chunk) {
  const int64_t b = batch.queries(), np = batch.p_ids.size(0);
  std::vector<std::vector<TowerInput>> calls;
  for (int64_t s = 0; s < std::max(b, np); s += chunk) {
    auto& call = calls.emplace_back();
    if (s < b) call.push_back({batch.q_ids.slice(0, s, s + chunk), batch.q_mask.slice(0, s, s + chunk), Tower::Query});
    if (s < np)
      call.push_back({batch.p_ids.slice(0, s, s + chunk), batch.p_mask.slice(0, s, s + chunk), Tower::Passage});
  }
  return calls;
}

}  // namespace

std::pair<torch::Tensor, torch::Tensor> embed_in_chunks(const EncodeFn& encode, const PairBatch& batch,
                                                        int64_t chunk) {
  torch::NoGradGuard no_grad;
  const AutocastPass pass;
  std::vector<torch::Tensor> q_parts, p_parts;
  for (const auto& call : chunk_calls(batch, chunk)) {
    const auto embeddings = encode(call);
    for (size_t i = 0; i < call.size(); ++i)
      (call[i].tower == Tower::Query ? q_parts : p_parts).push_back(embeddings[i]);
  }
  return {torch::cat(q_parts), torch::cat(p_parts)};
}

void backward_in_chunks(const EncodeFn& encode, const PairBatch& batch, int64_t chunk, const torch::Tensor& q_grad,
                        const torch::Tensor& p_grad) {
  const AutocastPass pass;
  int64_t s = 0;
  for (const auto& call : chunk_calls(batch, chunk)) {
    const auto embeddings = encode(call);
    std::vector<torch::Tensor> grads;
    for (const auto& in : call) grads.push_back((in.tower == Tower::Query ? q_grad : p_grad).slice(0, s, s + chunk));
    torch::autograd::backward(embeddings, grads);
    s += chunk;
  }
}

torch::Tensor backward_full(const EncodeFn& encode, const PairBatch& batch, const torch::Tensor& scale,
                            const LossSpec& loss_spec) {
  const int64_t b = batch.queries();
  const auto e = encode({{batch.q_ids, batch.q_mask, Tower::Query}, {batch.p_ids, batch.p_mask, Tower::Passage}});
  const torch::Tensor &q = e[0], &p = e[1];
  torch::Tensor loss = contrastive_loss(q, p.slice(0, 0, b), split_negatives(p, b), scale, loss_spec);
  loss.backward();
  return loss.detach().to(torch::kDouble);
}

torch::Tensor backward_plain(const EncodeFn& encode, const PairBatch& batch, const torch::Tensor& scale, int64_t chunk,
                             const LossSpec& loss_spec) {
  const int64_t b = batch.queries();
  const int64_t h = batch.hard_negatives;
  // Each micro-batch's graph is freed by its backward; the scale's graph (exp of a learned logit) is shared,
  // so its gradient is gathered on a detached leaf and pushed through once at the end.
  const torch::Tensor scale_leaf = scale.detach().requires_grad_(scale.requires_grad());
  torch::Tensor total = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(batch.q_ids.device()));
  const AutocastPass pass;
  for (int64_t begin = 0; begin < b; begin += chunk) {
    const int64_t end = std::min(b, begin + chunk);
    // This micro-batch's positives, then its queries' hard negatives.
    // Made where each tensor lies (the mask may be on the host): a copy across would wait for the device.
    const auto select = [&](const torch::Tensor& x) {
      const auto on = torch::TensorOptions().dtype(torch::kLong).device(x.device());
      torch::Tensor rows = torch::arange(begin, end, on);
      if (h > 0) rows = torch::cat({rows, torch::arange(b + begin * h, b + end * h, on)});
      return x.index_select(0, rows);
    };
    const auto e = encode({{batch.q_ids.slice(0, begin, end), batch.q_mask.slice(0, begin, end), Tower::Query},
                           {select(batch.p_ids), select(batch.p_mask), Tower::Passage}});
    const torch::Tensor &q = e[0], &p = e[1];
    const int64_t n = end - begin;
    torch::Tensor loss = contrastive_loss(q, p.slice(0, 0, n), split_negatives(p, n), scale_leaf, loss_spec) *
                         (static_cast<double>(n) / static_cast<double>(b));
    loss.backward();
    total += loss.detach().to(torch::kDouble);
  }
  if (scale.requires_grad()) scale.backward(scale_leaf.grad());
  return total;
}

torch::Tensor backward_grad_cache(const EncodeFn& encode, const PairBatch& batch, const torch::Tensor& scale,
                                  int64_t chunk, const LossSpec& loss_spec) {
  const int64_t b = batch.queries();
  // Pass 1: embeddings of the whole batch, no graph. The generators are rewound afterwards so that pass 2
  // draws the same dropout masks, chunk for chunk.
  const model::RngState rng = model::capture_rng_state();
  auto [q_cached, p_cached] = embed_in_chunks(encode, batch, chunk);
  // The full-batch loss on the cached embeddings gives d loss / d embedding for every row.
  torch::Tensor q = q_cached.detach().requires_grad_(true);
  torch::Tensor p = p_cached.detach().requires_grad_(true);
  torch::Tensor loss = contrastive_loss(q, p.slice(0, 0, b), split_negatives(p, b), scale, loss_spec);
  loss.backward();

  // Pass 2: re-embed each chunk with a graph and push the cached gradient through it.
  model::restore_rng_state(rng);
  backward_in_chunks(encode, batch, chunk, q.grad(), p.grad());
  return loss.detach().to(torch::kDouble);
}

}  // namespace ragmig::train
