// Exact inner-product search over float matrices, written plainly: the reference that every fast path is
// checked against (FAISS Flat, the LibTorch matmul search) and the yardstick of every ANN index, whose
// recall is reported as the overlap of its top-k with the exact top-k.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/matrix.h"

namespace ragmig::index {

/// Top-k results of a batch of queries, row-major [queries x k]. Scores are similarities (higher is
/// better); a query with fewer than k candidates is padded with id -1.
struct SearchResult {
  int64_t queries = 0, k = 0;
  std::vector<int64_t> ids;
  std::vector<float> scores;

  SearchResult() = default;
  SearchResult(int64_t q, int64_t kk) : queries(q), k(kk), ids(static_cast<size_t>(q * kk), -1), scores(static_cast<size_t>(q * kk), 0.0f) {}
  int64_t id(int64_t q, int64_t j) const { return ids[static_cast<size_t>(q * k + j)]; }
  float score(int64_t q, int64_t j) const { return scores[static_cast<size_t>(q * k + j)]; }
};

/// For each query row, the k document rows with the largest inner product, score descending and row
/// ascending on ties; k is capped at the number of documents. Both matrices must have the same cols
/// (DataError otherwise). Runs on `threads` threads (0 = all cores).
SearchResult exact_search(const FloatMatrix& queries, const FloatMatrix& docs, int64_t k, int threads = 0);

/// Mean over queries of |approx top-k ∩ exact top-k| / |exact top-k| (ids of -1 ignored; queries whose
/// exact list is empty are skipped). Both results must cover the same queries and have k columns or more.
double recall_against(const SearchResult& approx, const SearchResult& exact, int64_t k);

}  // namespace ragmig::index
