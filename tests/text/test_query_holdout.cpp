// The seeded hold-out of training queries (text/query_holdout.h): the same ids whatever the order, nested
// as the count grows, every example of a held-out query removed, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "core/error.h"
#include "text/query_holdout.h"

namespace ragmig::text {
namespace {

std::vector<std::string> ids(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("q" + std::to_string(i));
  return out;
}

TEST(QueryHoldout, CarveIsASeededOrderIndependentOfTheInputOrder) {
  const auto all = ids(200);
  const auto first = carve_queries(all, 30);
  ASSERT_EQ(first.size(), 30u);
  auto shuffled = all;
  std::mt19937 rng(3);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  shuffled.push_back("q7");  // a repeated id counts once
  EXPECT_EQ(carve_queries(shuffled, 30), first);
  // Nested: a larger hold-out keeps the smaller one, so a sweep's trials that hold out more agree on the rest.
  const auto more = carve_queries(all, 60);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), more.begin()));
  EXPECT_NE(carve_queries(all, 30, 99), first) << "another seed, other queries";
  EXPECT_EQ(carve_queries(all, 500).size(), 200u);
  EXPECT_TRUE(carve_queries(all, 0).empty());
  // Not simply the first ids in sorted order.
  auto sorted = all;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(std::set<std::string>(first.begin(), first.end()), std::set<std::string>(sorted.begin(), sorted.begin() + 30));
}

TEST(QueryHoldout, EveryExampleOfAHeldOutQueryIsRemoved) {
  std::vector<TrainingExample> examples;
  for (int q = 0; q < 50; ++q)
    for (int p = 0; p <= q % 3; ++p)
      examples.push_back({"q" + std::to_string(q), "query", "passage", {}, q * 10 + p, {}});
  const size_t before = examples.size();
  const auto held = hold_out_queries(examples, 10, "pairs.jsonl");
  ASSERT_EQ(held.size(), 10u);
  EXPECT_TRUE(std::is_sorted(held.begin(), held.end()));
  const std::set<std::string> out(held.begin(), held.end());
  size_t removed = 0;
  for (int q = 0; q < 50; ++q)
    if (out.count("q" + std::to_string(q))) removed += static_cast<size_t>(q % 3 + 1);
  EXPECT_EQ(examples.size(), before - removed);
  for (const auto& e : examples) EXPECT_EQ(out.count(e.query_id), 0u) << e.query_id << " was held out yet kept";
  auto expected = carve_queries(ids(50), 10);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(held, expected) << "the trainer holds out what eval's carve of the same ids would choose";
  EXPECT_TRUE(hold_out_queries(examples, 0, "pairs.jsonl").empty());
}

TEST(QueryHoldout, RefusesExamplesWithoutIdsAndHoldingOutEverything) {
  std::vector<TrainingExample> examples = {{"q1", "a", "b", {}, 0, {}}, {"", "c", "d", {}, 1, {}}};
  try {
    hold_out_queries(examples, 1, "runs/pairs.jsonl");
    FAIL() << "an example without a query id was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("runs/pairs.jsonl: data.holdout_queries needs a query id"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("example 2"), std::string::npos) << e.what();
  }
  examples[1].query_id = "q2";
  try {
    hold_out_queries(examples, 5, "qrels/train.tsv");
    FAIL() << "holding out every query was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("holds out all 2 queries"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ragmig::text
