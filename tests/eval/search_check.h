// Comparing a fast exact search with the plain reference: float sums in another order may swap documents
// whose scores differ by rounding, so positions must agree in score (within `tol`) and in id unless the two
// documents at a position are tied within `tol`.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "index/exact_search.h"

namespace ragmig::testing {

inline index::FloatMatrix random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  index::FloatMatrix m(rows, cols);
  for (auto& v : m.data) v = normal(rng);
  return m;
}

inline void expect_same_search(const index::SearchResult& got, const index::SearchResult& ref, float tol = 1e-4f) {
  ASSERT_EQ(got.queries, ref.queries);
  ASSERT_EQ(got.k, ref.k);
  for (int64_t q = 0; q < ref.queries; ++q) {
    for (int64_t j = 0; j < ref.k; ++j) {
      EXPECT_NEAR(got.score(q, j), ref.score(q, j), tol) << "query " << q << " rank " << j;
      if (got.id(q, j) == ref.id(q, j)) continue;
      // A swap is only acceptable between documents the reference itself scores (nearly) alike.
      const bool tied_above = j > 0 && std::fabs(ref.score(q, j - 1) - ref.score(q, j)) < tol;
      const bool tied_below = j + 1 < ref.k && std::fabs(ref.score(q, j + 1) - ref.score(q, j)) < tol;
      EXPECT_TRUE(tied_above || tied_below || j == ref.k - 1)
          << "query " << q << " rank " << j << ": " << got.id(q, j) << " instead of " << ref.id(q, j);
    }
  }
}

}  // namespace ragmig::testing
