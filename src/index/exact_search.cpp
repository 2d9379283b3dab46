// The exact search reference (see exact_search.h): blocks of queries against all documents, one score
// buffer per block, then a partial sort per query.
#include "index/exact_search.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "core/error.h"
#include "index/parallel.h"

namespace ragmig::index {

SearchResult exact_search(const FloatMatrix& queries, const FloatMatrix& docs, int64_t k, int threads) {
  if (queries.rows > 0 && docs.rows > 0 && queries.cols != docs.cols)
    throw DataError("exact search: queries have " + std::to_string(queries.cols) + " dimensions, documents " +
                    std::to_string(docs.cols));
  k = std::max<int64_t>(0, std::min(k, docs.rows));
  SearchResult out(queries.rows, k);
  if (k == 0) return out;
  const int64_t d = docs.cols;
  parallel_for(queries.rows, resolve_threads(threads), 8, [&](int64_t b, int64_t e, int) {
    std::vector<float> scores(static_cast<size_t>(docs.rows));
    std::vector<int64_t> order(static_cast<size_t>(docs.rows));
    for (int64_t q = b; q < e; ++q) {
      const float* x = queries.row(q);
      for (int64_t r = 0; r < docs.rows; ++r) {
        const float* y = docs.row(r);
        float s = 0;
        for (int64_t j = 0; j < d; ++j) s += x[j] * y[j];
        scores[static_cast<size_t>(r)] = s;
      }
      std::iota(order.begin(), order.end(), 0);
      auto before = [&](int64_t a, int64_t c) {
        const float sa = scores[static_cast<size_t>(a)], sc = scores[static_cast<size_t>(c)];
        return sa != sc ? sa > sc : a < c;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        out.ids[static_cast<size_t>(q * k + j)] = order[static_cast<size_t>(j)];
        out.scores[static_cast<size_t>(q * k + j)] = scores[static_cast<size_t>(order[static_cast<size_t>(j)])];
      }
    }
  });
  return out;
}

double recall_against(const SearchResult& approx, const SearchResult& exact, int64_t k) {
  RAGMIG_CHECK(approx.queries == exact.queries, "recall_against: different query counts");
  RAGMIG_CHECK(approx.k >= std::min(k, exact.k) && exact.k >= 0, "recall_against: k too large");
  double sum = 0;
  int64_t counted = 0;
  const int64_t ke = std::min(k, exact.k), ka = std::min(k, approx.k);
  for (int64_t q = 0; q < exact.queries; ++q) {
    std::unordered_set<int64_t> truth;
    for (int64_t j = 0; j < ke; ++j)
      if (exact.id(q, j) >= 0) truth.insert(exact.id(q, j));
    if (truth.empty()) continue;
    int64_t hits = 0;
    for (int64_t j = 0; j < ka; ++j) hits += truth.count(approx.id(q, j)) ? 1 : 0;
    sum += static_cast<double>(hits) / static_cast<double>(truth.size());
    ++counted;
  }
  return counted > 0 ? sum / static_cast<double>(counted) : 0.0;
}

}  // namespace ragmig::index
