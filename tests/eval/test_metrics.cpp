// trec_eval's metrics on runs small enough to compute by hand: binary and graded relevance, ties (broken by
// descending document id, as trec_eval does), relevant documents never retrieved, empty runs, cut-offs
// past the end of the run, the relevance level, and BEIR's identical-id rule.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "eval/metrics.h"

namespace ragmig::eval {
namespace {

struct MetricCase {
  friend std::ostream& operator<<(std::ostream& os, const MetricCase& c) { return os << c.name; }
  std::string name;
  std::vector<ScoredDoc> run;
  QueryJudgments qrels;
  std::vector<std::pair<std::string, double>> expected;  // metric name -> value
  MetricOptions options = {};
  std::string query_id = "q";
};

class MetricTable : public ::testing::TestWithParam<MetricCase> {};

TEST_P(MetricTable, MatchesTheHandComputedValues) {
  const MetricCase& c = GetParam();
  std::vector<Metric> metrics;
  for (const auto& [name, value] : c.expected) metrics.push_back(parse_metric(name));
  const std::vector<double> got = query_metrics(c.run, c.qrels, c.query_id, metrics, c.options);
  for (size_t i = 0; i < metrics.size(); ++i) EXPECT_NEAR(got[i], c.expected[i].second, 1e-9) << c.expected[i].first;
  // The order of the run as given never matters: trec_eval sorts by score itself.
  std::vector<ScoredDoc> reversed(c.run.rbegin(), c.run.rend());
  EXPECT_EQ(query_metrics(reversed, c.qrels, c.query_id, metrics, c.options), got);
}

const double kL3 = std::log2(3.0), kL5 = std::log2(5.0);

INSTANTIATE_TEST_SUITE_P(
    Cases, MetricTable,
    ::testing::Values(
        MetricCase{"perfect", {{"a", 3}, {"b", 2}, {"c", 1}}, {{"a", 1}},
                   {{"ndcg@10", 1}, {"recall@1", 1}, {"p@1", 1}, {"p@3", 1.0 / 3}, {"mrr@10", 1}, {"map@10", 1}}},
        // Relevant at ranks 2 and 4; a third relevant document (z) is never retrieved.
        MetricCase{"relevant_at_2_and_4_one_missing",
                   {{"a", 4}, {"b", 3}, {"c", 2}, {"d", 1}},
                   {{"b", 1}, {"d", 1}, {"z", 1}},
                   {{"p@2", 0.5},
                    {"p@4", 0.5},
                    {"recall@2", 1.0 / 3},
                    {"recall@4", 2.0 / 3},
                    {"mrr@1", 0},
                    {"mrr@10", 0.5},
                    {"map@2", (1.0 / 2) / 3},
                    {"map@10", (1.0 / 2 + 2.0 / 4) / 3},
                    // DCG 1/log2 3 + 1/log2 5; ideal 1 + 1/log2 3 + 1/log2 4
                    {"ndcg@4", (1 / kL3 + 1 / kL5) / (1 + 1 / kL3 + 0.5)}}},
        // Graded: a 1, b 2, c judged 0, d 3 unretrieved. Gains are the grades; the ideal is 3, 2, 1.
        MetricCase{"graded",
                   {{"a", 0.9}, {"b", 0.8}, {"c", 0.7}},
                   {{"a", 1}, {"b", 2}, {"c", 0}, {"d", 3}},
                   {{"ndcg@1", 1.0 / 3},
                    {"ndcg@2", (1 + 2 / kL3) / (3 + 2 / kL3)},
                    {"ndcg@3", (1 + 2 / kL3) / (3 + 2 / kL3 + 0.5)},
                    {"recall@3", 2.0 / 3},
                    {"p@3", 2.0 / 3},
                    {"mrr@10", 1}}},
        // x and y tie: trec_eval puts the larger id first, so y is rank 1 and the relevant x rank 2.
        MetricCase{"tie_goes_to_the_larger_id",
                   {{"x", 1}, {"y", 1}, {"z", 0.5}},
                   {{"x", 1}},
                   {{"mrr@10", 0.5}, {"p@1", 0}, {"ndcg@1", 0}, {"ndcg@2", 1 / kL3}, {"recall@2", 1}}},
        MetricCase{"tie_won_by_the_relevant_larger_id",
                   {{"x", 1}, {"y", 1}},
                   {{"y", 1}},
                   {{"mrr@10", 1}, {"ndcg@1", 1}}},
        MetricCase{"nothing_relevant_retrieved",
                   {{"a", 2}, {"b", 1}},
                   {{"c", 1}},
                   {{"ndcg@10", 0}, {"recall@100", 0}, {"mrr@10", 0}, {"map@100", 0}, {"p@10", 0}}},
        MetricCase{"no_relevant_document_judged", {{"a", 1}}, {{"a", 0}}, {{"ndcg@10", 0}, {"recall@10", 0}, {"map@10", 0}}},
        MetricCase{"empty_run", {}, {{"a", 1}}, {{"ndcg@10", 0}, {"recall@10", 0}, {"mrr@10", 0}, {"p@10", 0}}},
        // P@k divides by k even when fewer than k were retrieved (trec_eval's P.10).
        MetricCase{"precision_past_the_end", {{"a", 1}}, {{"a", 1}}, {{"p@10", 0.1}, {"recall@10", 1}}},
        MetricCase{"relevance_level_two",
                   {{"a", 2}, {"b", 1}},
                   {{"a", 1}, {"b", 2}},
                   {{"recall@1", 0}, {"recall@2", 1}, {"mrr@10", 0.5}, {"ndcg@2", (1 + 2 / kL3) / (2 + 1 / kL3)}},
                   MetricOptions{2, false}},
        MetricCase{"own_id_counts_by_default", {{"q", 2}, {"d", 1}}, {{"d", 1}, {"q", 1}}, {{"mrr@10", 1}, {"recall@1", 0.5}}},
        MetricCase{"own_id_ignored_beir_rule",
                   {{"q", 2}, {"d", 1}},
                   {{"d", 1}, {"q", 1}},
                   {{"mrr@10", 1}, {"p@1", 1}, {"recall@1", 0.5}},
                   MetricOptions{1, true}},
        MetricCase{"own_id_ignored_moves_others_up",
                   {{"q", 3}, {"a", 2}, {"d", 1}},
                   {{"d", 1}},
                   {{"mrr@10", 0.5}, {"recall@2", 1}},
                   MetricOptions{1, true}}),
    [](const auto& info) { return info.param.name; });

TEST(Metrics, MeansCoverEveryJudgedQueryAndOnlyThose) {
  Judgments j;
  j.by_query["q1"] = {{"a", 1}};
  j.by_query["q2"] = {{"b", 1}};  // no run at all: scores 0
  TrecRun run;
  run["q1"] = {{"a", 1}};
  run["q9"] = {{"a", 1}};  // not judged: ignored
  const MetricReport r = evaluate_run(run, j, {parse_metric("ndcg@10"), parse_metric("recall@10")});
  EXPECT_EQ(r.queries, 2);
  EXPECT_DOUBLE_EQ(r.value("ndcg@10"), 0.5);
  EXPECT_DOUBLE_EQ(r.value("recall@10"), 0.5);
  EXPECT_EQ(r.per_query.size(), 2u);
  EXPECT_DOUBLE_EQ(r.per_query.at("q2")[0], 0.0);
}

TEST(Metrics, TrecOrderSortsByScoreThenDescendingId) {
  const auto ranked = trec_order({{"b", 1}, {"c", 2}, {"a", 1}, {"d", 1}}, "q", {});
  std::vector<std::string> ids;
  for (const auto& d : ranked) ids.push_back(d.doc_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"c", "d", "b", "a"}));
}

TEST(Metrics, NamesRoundTripAndNonsenseIsRefused) {
  for (const Metric& m : default_metrics()) EXPECT_EQ(parse_metric(m.name()), m);
  for (const char* name : {"ndcg@10", "recall@1000", "p@5", "mrr@10", "map@100"}) EXPECT_EQ(parse_metric(name).name(), name);
  for (const char* bad : {"ndcg", "ndcg@", "ndcg@0", "ndcg@010", "ndcg@x", "bleu@4", "NDCG@10", "recall@-1"})
    EXPECT_THROW(parse_metric(bad), ConfigError) << bad;
}

}  // namespace
}  // namespace ragmig::eval
