// The CUDA path of the LibTorch exact search against the plain reference; skips without a GPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

#include "eval/torch_search.h"
#include "index/exact_search.h"
#include "search_check.h"

namespace ragmig::eval {
namespace {

using testing::random_matrix;

void expect_same(const index::SearchResult& got, const index::SearchResult& ref) { testing::expect_same_search(got, ref); }

TEST(TorchSearchCuda, EqualsTheExactReferenceOnTheGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto docs = random_matrix(20000, 64, 5), queries = random_matrix(300, 64, 6);
  TorchSearchOptions o;
  o.device = "cuda";
  o.doc_chunk = 4096;
  expect_same(torch_exact_search(queries, docs, 10, o), index::exact_search(queries, docs, 10, 2));
}

}  // namespace
}  // namespace ragmig::eval
