// Gradient computation for one batch, three ways (see grad_step.h).
#include "train/grad_step.h"

#include "train/rng_state.h"

namespace ragmig::train {
namespace {

torch::Tensor split_negatives(const torch::Tensor& p_emb, int64_t b) {
  return p_emb.size(0) > b ? p_emb.slice(0, b) : torch::Tensor();
}

// Embeds rows [0, n) of ids/mask in chunks of `chunk` rows.
template <class Fn>
void for_chunks(int64_t n, int64_t chunk, Fn&& fn) {
  for (int64_t begin = 0; begin < n; begin += chunk) fn(begin, std::min(n, begin + chunk));
}

}  // namespace

torch::Tensor backward_full(const EncodeFn& encode, const PairBatch& batch, const torch::Tensor& scale,
                            const LossSpec& loss_spec) {
  const int64_t b = batch.queries();
  torch::Tensor q = encode(batch.q_ids, batch.q_mask, Tower::Query);
  torch::Tensor p = encode(batch.p_ids, batch.p_mask, Tower::Passage);
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
  for_chunks(b, chunk, [&](int64_t begin, int64_t end) {
    // This micro-batch's positives, then its queries' hard negatives.
    // Made where each tensor lies (the mask may be on the host): a copy across would wait for the device.
    const auto select = [&](const torch::Tensor& x) {
      const auto on = torch::TensorOptions().dtype(torch::kLong).device(x.device());
      torch::Tensor rows = torch::arange(begin, end, on);
      if (h > 0) rows = torch::cat({rows, torch::arange(b + begin * h, b + end * h, on)});
      return x.index_select(0, rows);
    };
    torch::Tensor q = encode(batch.q_ids.slice(0, begin, end), batch.q_mask.slice(0, begin, end), Tower::Query);
    torch::Tensor p = encode(select(batch.p_ids), select(batch.p_mask), Tower::Passage);
    const int64_t n = end - begin;
    torch::Tensor loss = contrastive_loss(q, p.slice(0, 0, n), split_negatives(p, n), scale_leaf, loss_spec) *
                         (static_cast<double>(n) / static_cast<double>(b));
    loss.backward();
    total += loss.detach().to(torch::kDouble);
  });
  if (scale.requires_grad()) scale.backward(scale_leaf.grad());
  return total;
}

torch::Tensor backward_grad_cache(const EncodeFn& encode, const PairBatch& batch, const torch::Tensor& scale,
                                  int64_t chunk, const LossSpec& loss_spec) {
  const int64_t b = batch.queries();
  const int64_t np = batch.p_ids.size(0);
  // Pass 1: embeddings of the whole batch, no graph. The generators are rewound afterwards so that pass 2
  // draws the same dropout masks, chunk for chunk.
  const RngState rng = capture_rng_state();
  std::vector<torch::Tensor> q_parts, p_parts;
  {
    torch::NoGradGuard no_grad;
    for_chunks(b, chunk, [&](int64_t s, int64_t e) {
      q_parts.push_back(encode(batch.q_ids.slice(0, s, e), batch.q_mask.slice(0, s, e), Tower::Query));
    });
    for_chunks(np, chunk, [&](int64_t s, int64_t e) {
      p_parts.push_back(encode(batch.p_ids.slice(0, s, e), batch.p_mask.slice(0, s, e), Tower::Passage));
    });
  }
  // The full-batch loss on the cached embeddings gives d loss / d embedding for every row.
  torch::Tensor q = torch::cat(q_parts).detach().requires_grad_(true);
  torch::Tensor p = torch::cat(p_parts).detach().requires_grad_(true);
  torch::Tensor loss = contrastive_loss(q, p.slice(0, 0, b), split_negatives(p, b), scale, loss_spec);
  loss.backward();
  const torch::Tensor q_grad = q.grad();
  const torch::Tensor p_grad = p.grad();

  // Pass 2: re-embed each chunk with a graph and push the cached gradient through it.
  restore_rng_state(rng);
  for_chunks(b, chunk, [&](int64_t s, int64_t e) {
    torch::Tensor emb = encode(batch.q_ids.slice(0, s, e), batch.q_mask.slice(0, s, e), Tower::Query);
    emb.backward(q_grad.slice(0, s, e));
  });
  for_chunks(np, chunk, [&](int64_t s, int64_t e) {
    torch::Tensor emb = encode(batch.p_ids.slice(0, s, e), batch.p_mask.slice(0, s, e), Tower::Passage);
    emb.backward(p_grad.slice(0, s, e));
  });
  return loss.detach().to(torch::kDouble);
}

}  // namespace ragmig::train
