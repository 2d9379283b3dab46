// The fused InfoNCE (one matmul + cross-entropy), its row-by-row reference, and the general loss of several
// directions (sentence-transformers' MultipleNegativesRankingLoss, with ragmig's hard negatives grouped per query).
#include "train/contrastive_loss.h"

#include <algorithm>
#include <limits>

namespace ragmig::train {
namespace {

torch::Tensor candidates(const torch::Tensor& p, const torch::Tensor& negs) {
  return negs.defined() && negs.size(0) > 0 ? torch::cat({p, negs}, 0) : p;
}

}  // namespace

torch::Tensor info_nce_loss(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                            const torch::Tensor& scale) {
  TORCH_CHECK(q.dim() == 2 && p.sizes() == q.sizes(), "info_nce_loss: q and p must both be [B, D]");
  const auto dtype = at::promote_types(q.scalar_type(), torch::kFloat32);  // float64 stays float64 (tests)
  torch::Tensor c = candidates(p, negs).to(dtype);
  torch::Tensor logits = torch::matmul(q.to(dtype), c.t()) * scale;
  torch::Tensor labels = torch::arange(q.size(0), torch::TensorOptions().dtype(torch::kLong).device(q.device()));
  return torch::nn::functional::cross_entropy(logits, labels);
}

LossTerms loss_terms(const TrainOptions& options) {
  const auto has = [&](const char* d) {
    return std::find(options.loss_directions.begin(), options.loss_directions.end(), d) != options.loss_directions.end();
  };
  LossTerms terms;
  terms.doc_to_query = has("doc_to_query");
  terms.query_to_query = has("query_to_query");
  terms.doc_to_doc = has("doc_to_doc");
  terms.per_direction = options.loss_partition == "per_direction";
  terms.hardness_mode = options.hardness_mode;
  terms.hardness_strength = options.hardness_strength;
  return terms;
}

torch::Tensor multiple_negatives_loss(const torch::Tensor& q_in, const torch::Tensor& p_in, const torch::Tensor& negs,
                                      const torch::Tensor& scale, const LossTerms& terms) {
  if (terms.infonce()) return info_nce_loss(q_in, p_in, negs, scale);
  TORCH_CHECK(q_in.dim() == 2 && p_in.sizes() == q_in.sizes(), "multiple_negatives_loss: q and p must both be [B, D]");
  const int64_t b = q_in.size(0);
  const int64_t n = negs.defined() ? negs.size(0) : 0;
  TORCH_CHECK(n % b == 0, "multiple_negatives_loss: ", n, " hard negatives for ", b, " queries");
  const int64_t h = n / b;
  const auto dtype = at::promote_types(q_in.scalar_type(), torch::kFloat32);
  const torch::Tensor q = q_in.to(dtype), p = p_in.to(dtype), c = candidates(p_in, negs).to(dtype);
  const auto opts = torch::TensorOptions().device(q.device());
  // own[i][j]: passage j is query i's (its positive, column i, or one of its hard negatives, b + i*h ...).
  const torch::Tensor rows = torch::arange(b, opts.dtype(torch::kLong)).unsqueeze(1);
  const torch::Tensor cols = torch::arange(b + n, opts.dtype(torch::kLong)).unsqueeze(0);
  const torch::Tensor own = (cols == rows) | ((cols >= b) & (torch::div(cols - b, std::max<int64_t>(h, 1), "floor") == rows));
  const double minus_inf = -std::numeric_limits<double>::infinity();

  const torch::Tensor q_to_d = torch::matmul(q, c.t());  // [B, B+N]
  std::vector<torch::Tensor> logits = {q_to_d * scale};
  if (terms.hardness_mode != "none" && terms.hardness_strength > 0) {
    torch::Tensor keep;
    if (terms.hardness_mode == "hard_negatives") keep = own & (cols >= b);
    else if (terms.hardness_mode == "in_batch_negatives") keep = ~own;
    else if (terms.hardness_mode == "all_negatives") keep = cols != rows;
    else TORCH_CHECK(false, "multiple_negatives_loss: unknown hardness mode '", terms.hardness_mode, "'");
    logits[0] = logits[0] + terms.hardness_strength * q_to_d.detach() * keep.to(dtype);
  }
  const torch::Tensor positive = logits[0].diagonal();
  if (terms.query_to_query) logits.push_back(torch::matmul(q, q.t()).fill_diagonal_(minus_inf) * scale);
  if (terms.doc_to_query) logits.push_back(torch::matmul(p, q.t()) * scale);
  if (terms.doc_to_doc) logits.push_back(torch::matmul(p, c.t()).masked_fill(own, minus_inf) * scale);
  torch::Tensor log_z;
  if (terms.per_direction) {
    for (const auto& l : logits) log_z = log_z.defined() ? log_z + torch::logsumexp(l, 1) : torch::logsumexp(l, 1);
    log_z = log_z / static_cast<double>(logits.size());
  } else {
    log_z = torch::logsumexp(torch::cat(logits, 1), 1);
  }
  return (log_z - positive).mean();
}

torch::Tensor matryoshka_prefix(const torch::Tensor& e, int64_t d, bool renormalize) {
  namespace F = torch::nn::functional;
  const torch::Tensor head = e.narrow(1, 0, d);
  return renormalize ? F::normalize(head, F::NormalizeFuncOptions().p(2).dim(1).eps(1e-12)) : head;
}

torch::Tensor contrastive_loss(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                               const torch::Tensor& scale, const LossSpec& spec) {
  if (spec.dims.empty()) return multiple_negatives_loss(q, p, negs, scale, spec.terms);
  const auto prefix = [&](const torch::Tensor& x, int64_t d) {
    return x.defined() ? matryoshka_prefix(x, d, spec.renormalize) : x;
  };
  torch::Tensor total;
  for (const int64_t d : spec.dims) {
    TORCH_CHECK(d > 0 && d <= q.size(1), "contrastive_loss: a Matryoshka size of ", d, " for ", q.size(1),
                "-dimensional embeddings");
    const torch::Tensor loss = multiple_negatives_loss(prefix(q, d), prefix(p, d), prefix(negs, d), scale, spec.terms);
    total = total.defined() ? total + loss : loss;
  }
  return total;
}

torch::Tensor info_nce_loss_reference(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                                      const torch::Tensor& scale) {
  torch::Tensor c = candidates(p, negs).to(torch::kFloat64);
  torch::Tensor qd = q.to(torch::kFloat64);
  torch::Tensor s = scale.to(torch::kFloat64);
  torch::Tensor total = torch::zeros({}, qd.options());
  for (int64_t i = 0; i < q.size(0); ++i) {
    torch::Tensor row = (c * qd[i]).sum(1) * s;  // scores of query i against every candidate
    torch::Tensor m = row.max();
    torch::Tensor lse = m + (row - m).exp().sum().log();
    total = total + (lse - row[i]);
  }
  return (total / static_cast<double>(q.size(0))).to(at::promote_types(q.scalar_type(), torch::kFloat32));
}

}  // namespace ragmig::train
