// The loss's terms (train.loss_directions, loss_partition, hardness_*) against sentence-transformers' own
// MultipleNegativesRankingLoss.compute_loss_from_embeddings (tests/hf/st_loss.py), value and gradients, on the same
// embeddings: every direction set and partition it accepts, each hardness mode, with and without hard negatives.
// Needs RAGMIG_PYTHON's sentence-transformers (CI has it: a skip elsewhere, a failure under RAGMIG_REQUIRE_PYTHON).
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "support/process.h"
#include "support/test_support.h"
#include "train/contrastive_loss.h"

namespace ragmig::train {
namespace {

using nlohmann::json;
namespace F = torch::nn::functional;

// Rows of any length: sentence-transformers' cos_sim normalises them, as a ragmig model does before its loss, so
// the gradients compared are those of the raw rows through the normalisation.
torch::Tensor raw_rows(int64_t n, int64_t d) { return torch::randn({n, d}, torch::kDouble); }
torch::Tensor unit(const torch::Tensor& x) { return F::normalize(x, F::NormalizeFuncOptions().dim(1)); }

json rows_of(const torch::Tensor& t) {
  json out = json::array();
  for (int64_t i = 0; i < t.size(0); ++i) {
    json row = json::array();
    for (int64_t j = 0; j < t.size(1); ++j) row.push_back(t[i][j].item<double>());
    out.push_back(row);
  }
  return out;
}

torch::Tensor tensor_of(const json& rows) {
  std::vector<double> flat;
  for (const auto& r : rows)
    for (const auto& v : r) flat.push_back(v.get<double>());
  const auto n = static_cast<int64_t>(rows.size());
  return torch::tensor(flat, torch::kDouble).reshape({n, static_cast<int64_t>(flat.size()) / n});
}

struct Case {
  std::vector<std::string> directions;
  std::string partition = "joint";
  std::string hardness = "none";
  double strength = 0;
};

// The terms as `ragmig train` takes them from its config keys.
LossTerms terms_of(const Case& c) {
  TrainOptions options;
  options.loss_directions = c.directions;
  options.loss_partition = c.partition;
  options.hardness_mode = c.hardness;
  options.hardness_strength = c.strength;
  return loss_terms(options);
}

TEST(StLoss, EveryTermMatchesSentenceTransformersInValueAndGradient) {
  const auto found = testing::run_process(
      {RAGMIG_PYTHON_PATH, "-c", "import importlib.util as u; assert u.find_spec('sentence_transformers')"});
  if (found.exit_code != 0) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << RAGMIG_PYTHON_PATH << " lacks sentence-transformers";
    GTEST_SKIP() << RAGMIG_PYTHON_PATH << " lacks sentence-transformers";
  }
  const std::vector<Case> cases = {
      {{"query_to_doc"}},
      {{"query_to_doc", "doc_to_query"}, "per_direction"},  // MultipleNegativesSymmetricRankingLoss
      {{"query_to_doc", "doc_to_query"}},
      {{"query_to_doc", "query_to_query"}},
      {{"query_to_doc", "doc_to_doc"}},
      {{"query_to_doc", "query_to_query", "doc_to_query", "doc_to_doc"}},  // GTE's improved contrastive loss
      {{"query_to_doc"}, "joint", "in_batch_negatives", 9},
      {{"query_to_doc"}, "joint", "hard_negatives", 5},
      {{"query_to_doc", "doc_to_query"}, "per_direction", "all_negatives", 2},
  };
  const testing::ScratchDir dir;
  for (const int64_t h : {0, 2}) {  // hard negatives per query
    torch::manual_seed(7 + h);
    const int64_t b = 5, d = 8;
    const torch::Tensor q = raw_rows(b, d), p = raw_rows(b, d);
    // sentence-transformers takes negatives as columns (the k-th of every query), ragmig grouped by query.
    std::vector<torch::Tensor> columns;
    for (int64_t k = 0; k < h; ++k) columns.push_back(raw_rows(b, d));
    const torch::Tensor negs = h > 0 ? torch::stack(columns, 1).reshape({b * h, d}) : torch::Tensor();
    json in = {{"queries", rows_of(q)}, {"docs", json::array({rows_of(p)})}, {"scale", 20.0}, {"cases", json::array()}};
    for (const auto& c : columns) in["docs"].push_back(rows_of(c));
    for (const Case& c : cases) {
      if (c.hardness == "hard_negatives" && h == 0) continue;
      in["cases"].push_back({{"directions", c.directions},
                             {"partition_mode", c.partition},
                             {"hardness_mode", c.hardness == "none" ? json() : json(c.hardness)},
                             {"hardness_strength", c.strength}});
    }
    write_file_atomic(dir / "in.json", in.dump());
    const auto r = testing::run_process({RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/hf/st_loss.py",
                                         (dir / "in.json").string(), (dir / "out.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json theirs = json::parse(read_file(dir / "out.json"));
    size_t i = 0;
    for (const Case& c : cases) {
      if (c.hardness == "hard_negatives" && h == 0) continue;
      const json& t = theirs.at(i++);
      const auto q1 = q.clone().requires_grad_(true), p1 = p.clone().requires_grad_(true);
      const auto n1 = h > 0 ? negs.clone().requires_grad_(true) : torch::Tensor();
      const auto loss = multiple_negatives_loss(unit(q1), unit(p1), h > 0 ? unit(n1) : n1,
                                                torch::full({}, 20.0, torch::kDouble), terms_of(c));
      loss.backward();
      const std::string what = ::testing::PrintToString(c.directions) + " " + c.partition + " " + c.hardness +
                               " h=" + std::to_string(h);
      EXPECT_NEAR(loss.item<double>(), t["loss"].get<double>(), 1e-10) << what;
      EXPECT_LT((q1.grad() - tensor_of(t["grad_queries"])).abs().max().item<double>(), 1e-10) << what;
      EXPECT_LT((p1.grad() - tensor_of(t["grad_docs"][0])).abs().max().item<double>(), 1e-10) << what;
      for (int64_t k = 0; k < h; ++k) {
        const auto ours = n1.grad().reshape({b, h, d}).select(1, k);
        EXPECT_LT((ours - tensor_of(t["grad_docs"][static_cast<size_t>(1 + k)])).abs().max().item<double>(), 1e-10)
            << what << " negative column " << k;
      }
    }
  }
}

}  // namespace
}  // namespace ragmig::train
