// Query-adaptive retrieval depth (eval/adaptive_depth.h): the signals by hand, a rule fitted on one set of
// synthetic queries meeting its target on another drawn the same way at a smaller mean depth than the fixed
// depth that does, and the real `ragmig eval --retriever hybrid --target-recall` on SciFact (fitted on train
// queries, measured on test).
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "eval/adaptive_depth.h"
#include "eval_fixture.h"

namespace ragmig::eval {
namespace {

std::vector<index::Hit> ranked(const std::vector<int64_t>& docs) {
  std::vector<index::Hit> out;
  for (size_t i = 0; i < docs.size(); ++i) out.push_back({docs[i], static_cast<float>(docs.size() - i)});
  return out;
}

std::string name(int64_t row) { return "d" + std::to_string(row); }

TEST(AdaptiveDepth, SignalsByHand) {
  EXPECT_EQ(depth_grid(1000), (std::vector<int64_t>{10, 20, 30, 50, 100, 200, 300, 500, 1000}));
  EXPECT_EQ(depth_grid(100), (std::vector<int64_t>{10, 20, 30, 50, 100}));
  EXPECT_EQ(depth_grid(40), (std::vector<int64_t>{10, 20, 30, 40}));
  EXPECT_EQ(depth_grid(5), (std::vector<int64_t>{5}));
  const auto a = ranked({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), b = ranked({11, 10, 9, 20, 21, 22, 23, 24, 25, 26, 1});
  EXPECT_EQ(top10_agreement(a, b), 2);  // 10 and 9; 11 and 1 lie outside one of the top 10s
  EXPECT_EQ(top10_agreement(a, a), 10);
  EXPECT_EQ(top10_agreement(a, {}), 0);
  EXPECT_EQ(agreement_bucket(0), 0);
  EXPECT_EQ(agreement_bucket(2), 0);
  EXPECT_EQ(agreement_bucket(3), 1);
  EXPECT_EQ(agreement_bucket(8), 2);
  EXPECT_EQ(agreement_bucket(9), 3);
  EXPECT_EQ(agreement_bucket(10), 3);
  EXPECT_EQ(agreement_range(0), "0-2");
  EXPECT_EQ(agreement_range(3), "9-10");
  const QueryJudgments judged = {{"d3", 1}, {"d22", 2}, {"d99", 1}, {"d4", 0}};
  EXPECT_DOUBLE_EQ(pool_recall(a, b, 3, judged, name), 1.0 / 3);  // d3 (a's third); d22 is b's sixth
  EXPECT_DOUBLE_EQ(pool_recall(a, b, 6, judged, name), 2.0 / 3);
  EXPECT_DOUBLE_EQ(pool_recall(a, b, 6, {{"d4", 0}}, name), 1.0);  // nothing relevant: nothing to miss
}

// A query whose lists agree (both put the relevant document in their top 10) or disagree (it sits at a
// random rank up to 400 of one list); `agree` of them in every 10 agree.
struct Synthetic {
  std::vector<std::string> ids;
  HitLists dense, sparse;
  Judgments judgments;
};

Synthetic synthetic(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Synthetic s;
  for (int q = 0; q < n; ++q) {
    const bool agree = rng() % 10 < 6;
    const int64_t base = 100000 * (q + 1), relevant = base + 99999;
    std::vector<int64_t> d, p;
    for (int64_t i = 0; i < 500; ++i) d.push_back(base + i), p.push_back(base + (agree && i < 10 ? i : 1000 + i));
    if (agree) {
      d[rng() % 10] = relevant;
      p[rng() % 10] = relevant;
    } else {
      d[10 + rng() % 390] = relevant;
    }
    s.ids.push_back("q" + std::to_string(q));
    s.dense.push_back(ranked(d));
    s.sparse.push_back(ranked(p));
    s.judgments.by_query[s.ids.back()][name(relevant)] = 1;
  }
  return s;
}

TEST(AdaptiveDepth, AFittedRuleMeetsItsTargetOnOtherQueriesAtLessDepth) {
  const Synthetic fit = synthetic(400, 1), held_out = synthetic(400, 2);
  const auto grid = depth_grid(500);
  const DepthRule rule = fit_depth_rule(fit.ids, fit.dense, fit.sparse, fit.judgments, name, 0.9, grid);
  EXPECT_EQ(rule.queries, 400);
  EXPECT_EQ(rule.bucket_depth.back(), 10) << "agreeing lists hold the relevant document in their top 10";
  EXPECT_GE(rule.bucket_depth.front(), 200) << "disagreeing ones need depth";
  double recall = 0, depth = 0;
  std::vector<double> fixed(grid.size(), 0);
  for (size_t q = 0; q < held_out.ids.size(); ++q) {
    const int64_t d = choose_depth(rule, held_out.dense[q], held_out.sparse[q]);
    const auto& judged = held_out.judgments.by_query.at(held_out.ids[q]);
    recall += pool_recall(held_out.dense[q], held_out.sparse[q], d, judged, name) / 400;
    depth += static_cast<double>(d) / 400;
    for (size_t i = 0; i < grid.size(); ++i)
      fixed[i] += pool_recall(held_out.dense[q], held_out.sparse[q], grid[i], judged, name) / 400;
  }
  EXPECT_GE(recall, 0.87) << "target 0.9 on other queries";
  // The fixed depth that reaches the same recall goes deeper on average.
  size_t first = grid.size() - 1;
  for (size_t i = 0; i < grid.size(); ++i)
    if (fixed[i] >= recall) {
      first = i;
      break;
    }
  EXPECT_LT(depth, 0.7 * static_cast<double>(grid[first])) << "mean depth " << depth << " vs fixed " << grid[first];
}

// Lists that agree (top-10 agreement 10) hold the relevant document at rank 15 of one list, those that disagree
// (agreement 0) at rank 25, half and half: one fixed depth needs 30 for a pool recall of 0.75 and 20 for 0.5,
// while 20 for the agreeing and 30 for the others (25 on average), or 20 and 10 (15), would do. Buckets with
// no queries take the fixed depth.
TEST(AdaptiveDepth, AllocatesDepthWhereItBuysRecall) {
  Synthetic s;
  for (int q = 0; q < 200; ++q) {
    const bool agree = q % 2 == 0;
    const int64_t base = 100000 * (q + 1), relevant = base + 99999;
    std::vector<int64_t> d, p;
    for (int64_t i = 0; i < 100; ++i) d.push_back(base + i), p.push_back(base + (agree && i < 10 ? i : 1000 + i));
    d[agree ? 14 : 24] = relevant;
    s.ids.push_back("q" + std::to_string(q));
    s.dense.push_back(ranked(d));
    s.sparse.push_back(ranked(p));
    s.judgments.by_query[s.ids.back()][name(relevant)] = 1;
  }
  const auto grid = depth_grid(100);
  const DepthRule high = fit_depth_rule(s.ids, s.dense, s.sparse, s.judgments, name, 0.75, grid);
  EXPECT_EQ(high.bucket_depth, (std::vector<int64_t>{30, 30, 30, 20}));
  EXPECT_EQ(high.bucket_queries, (std::vector<int64_t>{100, 0, 0, 100}));
  EXPECT_EQ(high.fixed_recall, (std::vector<double>{0, 0.5, 1, 1, 1}));
  const DepthRule low = fit_depth_rule(s.ids, s.dense, s.sparse, s.judgments, name, 0.5, grid);
  EXPECT_EQ(low.bucket_depth, (std::vector<int64_t>{10, 20, 20, 20}));
}

TEST(AdaptiveDepth, Errors) {
  const Synthetic s = synthetic(5, 3);
  EXPECT_THROW(fit_depth_rule(s.ids, s.dense, s.sparse, s.judgments, name, 0, depth_grid(100)), ConfigError);
  EXPECT_THROW(fit_depth_rule(s.ids, s.dense, s.sparse, s.judgments, name, 1.5, depth_grid(100)), ConfigError);
  EXPECT_THROW(fit_depth_rule(s.ids, s.dense, s.sparse, Judgments{}, name, 0.9, depth_grid(100)), ConfigError);
  // Too few queries in a bucket: the depth that meets the target over all of them.
  const DepthRule rule = fit_depth_rule(s.ids, s.dense, s.sparse, s.judgments, name, 0.9, depth_grid(500), 10);
  for (int64_t d : rule.bucket_depth) EXPECT_EQ(d, rule.bucket_depth.front());
}

TEST(AdaptiveDepthCli, SciFactHybridFittedOnTrainMeetsItsTargetOnTest) {
  const auto scifact = testing::data_dir() / "beir/scifact";
  RAGMIG_REQUIRE_DATA("beir/scifact");
  testing::ScratchDir dir;
  testing::write_random_model(dir / "model");
  const auto r = testing::run_eval({"--data", scifact.string(), "--retriever", "hybrid", "--model", (dir / "model").string(),
                                    "--fusion", "Linear(alpha=0.1)", "--target-recall", "0.9", "--k", "100",
                                    "--candidates", "500", "--precision", "fp32", "--no-cache", "--json", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = testing::eval_json(r);
  ASSERT_TRUE(j.contains("depth")) << r.output;
  const auto& d = j["depth"];
  EXPECT_EQ(d["validation_queries"], 300);
  EXPECT_EQ(d["rule"].size(), 4u);
  EXPECT_GE(d["pool_recall"].get<double>(), 0.87) << d.dump();
  EXPECT_LT(d["mean_depth"].get<double>(), 500) << d.dump();
  ASSERT_EQ(d["fixed"].size(), 8u);  // 10, 20, 30, 50, 100, 200, 300, 500
  EXPECT_EQ(d["fixed"].back()["depth"], 500);
  // A target outside (0, 1], or for a retriever that fuses nothing, is refused before anything runs.
  for (const auto& [retriever, target] : {std::pair{"hybrid", "1.5"}, std::pair{"bm25", "0.9"}}) {
    const auto bad = testing::run_eval({"--data", scifact.string(), "--retriever", retriever, "--model",
                                        (dir / "model").string(), "--target-recall", target, "--no-cache"});
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_NE(bad.output.find("--target-recall"), std::string::npos) << bad.output;
  }
}

}  // namespace
}  // namespace ragmig::eval
