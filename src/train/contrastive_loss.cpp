// The fused InfoNCE (one matmul + cross-entropy) and its row-by-row reference.
#include "train/contrastive_loss.h"

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

torch::Tensor matryoshka_prefix(const torch::Tensor& e, int64_t d, bool renormalize) {
  namespace F = torch::nn::functional;
  const torch::Tensor head = e.narrow(1, 0, d);
  return renormalize ? F::normalize(head, F::NormalizeFuncOptions().p(2).dim(1).eps(1e-12)) : head;
}

torch::Tensor contrastive_loss(const torch::Tensor& q, const torch::Tensor& p, const torch::Tensor& negs,
                               const torch::Tensor& scale, const MatryoshkaLoss& matryoshka) {
  if (matryoshka.dims.empty()) return info_nce_loss(q, p, negs, scale);
  const auto prefix = [&](const torch::Tensor& x, int64_t d) {
    return x.defined() ? matryoshka_prefix(x, d, matryoshka.renormalize) : x;
  };
  torch::Tensor total;
  for (const int64_t d : matryoshka.dims) {
    TORCH_CHECK(d > 0 && d <= q.size(1), "contrastive_loss: a Matryoshka size of ", d, " for ", q.size(1),
                "-dimensional embeddings");
    const torch::Tensor loss = info_nce_loss(prefix(q, d), prefix(p, d), prefix(negs, d), scale);
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
