// torch_exact_search (see torch_search.h).
#include "eval/torch_search.h"

#include <torch/torch.h>

#include "core/error.h"
#include "eval/encoder.h"

namespace ragmig::eval {

index::SearchResult torch_exact_search(const index::FloatMatrix& queries, const index::FloatMatrix& docs, int64_t k,
                                       const TorchSearchOptions& options) {
  if (queries.rows > 0 && docs.rows > 0 && queries.cols != docs.cols)
    throw DataError("exact search: queries have " + std::to_string(queries.cols) + " dimensions, documents " +
                    std::to_string(docs.cols));
  k = std::max<int64_t>(0, std::min(k, docs.rows));
  index::SearchResult out(queries.rows, k);
  if (k == 0 || queries.rows == 0) return out;
  RAGMIG_CHECK(options.query_chunk > 0 && options.doc_chunk > 0);
  const torch::Device device(resolve_device(options.device));
  torch::NoGradGuard no_grad;
  // from_blob does not copy; the const_cast is safe because nothing writes through these tensors.
  const torch::Tensor q_all = torch::from_blob(const_cast<float*>(queries.data.data()), {queries.rows, queries.cols});
  const torch::Tensor d_all = torch::from_blob(const_cast<float*>(docs.data.data()), {docs.rows, docs.cols});
  std::vector<torch::Tensor> doc_chunks;
  for (int64_t b = 0; b < docs.rows; b += options.doc_chunk)
    doc_chunks.push_back(d_all.slice(0, b, std::min(docs.rows, b + options.doc_chunk)).to(device));
  for (int64_t qb = 0; qb < queries.rows; qb += options.query_chunk) {
    const int64_t qe = std::min(queries.rows, qb + options.query_chunk);
    const torch::Tensor q = q_all.slice(0, qb, qe).to(device);
    torch::Tensor best_scores, best_ids;
    int64_t offset = 0;
    for (const torch::Tensor& d : doc_chunks) {
      const int64_t kk = std::min(k, d.size(0));
      auto [s, i] = torch::matmul(q, d.t()).topk(kk, 1);
      i = i + offset;
      offset += d.size(0);
      if (!best_scores.defined()) {
        best_scores = s;
        best_ids = i;
        continue;
      }
      // Merge: the k best of (running top-k, this chunk's top-k).
      const torch::Tensor all_s = torch::cat({best_scores, s}, 1), all_i = torch::cat({best_ids, i}, 1);
      auto [ms, pos] = all_s.topk(std::min(k, all_s.size(1)), 1);
      best_scores = ms;
      best_ids = all_i.gather(1, pos);
    }
    const torch::Tensor s = best_scores.to(torch::kCPU).contiguous(), i = best_ids.to(torch::kCPU).contiguous();
    std::copy(s.data_ptr<float>(), s.data_ptr<float>() + s.numel(), out.scores.begin() + qb * k);
    std::copy(i.data_ptr<int64_t>(), i.data_ptr<int64_t>() + i.numel(), out.ids.begin() + qb * k);
  }
  return out;
}

}  // namespace ragmig::eval
