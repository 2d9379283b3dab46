// Hard-negative mining (eval/mine.h): what it takes, what it passes over and why, on hand-made rankings and
// on random ones checked against the rule itself.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "eval/mine.h"

namespace ragmig::eval {
namespace {

struct Fixture {
  std::map<std::string, std::string> texts;
  TrecRun run;
  Judgments judgments;
  const std::string& operator()(const std::string& id) const { return texts.at(id); }
};

std::vector<ScoredDoc> ranked(const std::vector<std::string>& ids) {
  std::vector<ScoredDoc> out;
  double score = 100;
  for (const auto& id : ids) out.push_back({id, score--});
  return out;
}

Fixture one_query() {
  Fixture f;
  f.texts = {{"p1", "Aspirin lowers the risk of heart attacks."},
             {"p2", "Low-dose aspirin and cardiovascular events: a trial."},
             {"copy", "ASPIRIN lowers the risk of heart-attacks!"},  // p1 with case and punctuation changed
             {"judged0", "Aspirin was judged and found not relevant."},
             {"n1", "Statins reduce cholesterol."},
             {"n2", "Ibuprofen and kidney function."},
             {"n3", "Heart rate variability in athletes."}};
  f.run["q1"] = ranked({"p1", "copy", "p2", "judged0", "n1", "n2", "n3"});
  f.judgments.by_query["q1"] = {{"p1", 1}, {"p2", 2}, {"judged0", 0}};
  return f;
}

TEST(Mine, NeverTakesAPositiveOrANearDuplicateOfOne) {
  const Fixture f = one_query();
  MineReport report;
  const auto examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3}, &report);
  ASSERT_EQ(examples.size(), 2u);  // one per positive, each with its query's negatives
  EXPECT_EQ(examples[0].positive_id, "p1");
  EXPECT_EQ(examples[1].positive_id, "p2");
  const std::vector<std::string> expected = {"judged0", "n1", "n2"};  // grade 0 is a judged negative: taken
  EXPECT_EQ(examples[0].negative_ids, expected);
  EXPECT_EQ(examples[1].negative_ids, expected);
  EXPECT_EQ(report.examples, 2);
  EXPECT_EQ(report.relevant_skipped, 2);
  EXPECT_EQ(report.duplicates_skipped, 1);
  EXPECT_EQ(report.short_examples, 0);
}

// A blank document (a corpus row without title or text) is no negative, and a blank positive gives no example: the
// trainer refuses blank texts in a pairs file.
TEST(Mine, BlankDocumentsAreNeitherNegativesNorPositives) {
  Fixture f = one_query();
  f.texts["n1"] = " \t";
  f.texts["p2"] = "";
  MineReport report;
  const auto examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3}, &report);
  ASSERT_EQ(examples.size(), 1u);
  EXPECT_EQ(examples[0].positive_id, "p1");
  EXPECT_EQ(examples[0].negative_ids, (std::vector<std::string>{"judged0", "n2", "n3"}));
  EXPECT_EQ(report.blank_skipped, 2);  // p2 as a positive, n1 as a candidate (p2 as a candidate: judged relevant)
  EXPECT_EQ(report.examples, 1);
}

TEST(Mine, SkipTopPassesOverTheFirstRanksAndShortListsAreCounted) {
  const Fixture f = one_query();
  MineReport report;
  const auto examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 5, .skip_top = 4}, &report);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0].negative_ids, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(report.relevant_skipped, 0);
  EXPECT_EQ(report.short_examples, 2);
}

TEST(Mine, QueriesWithoutARankingOrWithoutPositivesAreLeftOut) {
  Fixture f = one_query();
  f.judgments.by_query["q2"] = {{"n1", 1}};      // no list in the run
  f.judgments.by_query["q3"] = {{"n2", 0}};      // nothing relevant
  f.run["q3"] = ranked({"n1", "n2"});
  MineReport report;
  const auto examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 1}, &report);
  EXPECT_EQ(examples.size(), 2u);
  EXPECT_EQ(report.queries_without_run, 1);
}

TEST(Mine, OverlapThresholdDecidesWhatIsADuplicate) {
  EXPECT_EQ(word_set("The cat, the CAT; a dog."), word_set("a cat dog the"));  // case, punctuation, repeats
  EXPECT_EQ(word_set("The cat, the CAT; a dog.").size(), 4u);
  EXPECT_NE(word_set("cat"), word_set("cats"));
  EXPECT_EQ(word_set("Café naïve"), word_set("CAFé NAïVE"));  // UTF-8 bytes stay in words; ASCII is lowercased
  EXPECT_EQ(word_set("Café naïve").size(), 2u);
  EXPECT_DOUBLE_EQ(jaccard(word_set("a b c d"), word_set("a b c e")), 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(jaccard({}, {}), 1.0);
  Fixture f;
  f.texts = {{"p", "a b c d"}, {"near", "a b c e"}, {"far", "x y z"}};
  f.run["q"] = ranked({"near", "far"});
  f.judgments.by_query["q"] = {{"p", 1}};
  EXPECT_EQ(mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 2, .max_overlap = 0.6})[0].negative_ids,
            (std::vector<std::string>{"far"}));
  EXPECT_EQ(mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 2, .max_overlap = 0.61})[0].negative_ids,
            (std::vector<std::string>{"near", "far"}));
}

// Positive-aware mining: one_query()'s scores run 100 (p1), 99 (copy), 98 (p2), 97 (judged0), 96 (n1), 95, 94; the
// lowest-scored positive is p2 at 98.
TEST(Mine, MarginsKeepCandidatesThatScoreCloseToAPositiveOut) {
  const Fixture f = one_query();
  MineReport report;
  // 98 x 0.98 = 96.04: judged0 (97) is too close, n1 (96) is not.
  auto examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3, .relative_margin = 0.02}, &report);
  EXPECT_EQ(examples[0].negative_ids, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(examples[1].negative_ids, examples[0].negative_ids);
  EXPECT_EQ(report.margin_skipped, 1);
  EXPECT_EQ(report.short_examples, 0);
  // 98 - 2.5 = 95.5: n1 goes too, and the ranking runs out.
  examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3, .absolute_margin = 2.5}, &report);
  EXPECT_EQ(examples[0].negative_ids, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(report.margin_skipped, 2);
  EXPECT_EQ(report.short_examples, 2);
  // Both: the lower ceiling wins.
  examples = mine_negatives(f.run, f.judgments, std::cref(f),
                            {.negatives = 3, .relative_margin = 0.02, .absolute_margin = 2.5}, &report);
  EXPECT_EQ(examples[0].negative_ids, (std::vector<std::string>{"n2", "n3"}));
  // Margin 0: anything at or below the positive's score, so only what outscores p2 (nothing that is not a positive
  // or a duplicate here) is passed over.
  examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3, .relative_margin = 0}, &report);
  EXPECT_EQ(examples[0].negative_ids, (std::vector<std::string>{"judged0", "n1", "n2"}));
  EXPECT_EQ(report.margin_skipped, 0);
}

// Bounds on a negative's own score (sentence-transformers' max_score / min_score), apart from any positive's.
TEST(Mine, ScoreBoundsPassOverCandidatesAboveTheMaximumAndBelowTheMinimum) {
  const Fixture f = one_query();
  MineReport report;
  // judged0 scores 97, n1 96, n2 95, n3 94.
  auto examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3, .max_score = 96.5}, &report);
  EXPECT_EQ(examples[0].negative_ids, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(report.score_skipped, 1);
  EXPECT_EQ(report.margin_skipped, 0);
  examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3, .max_score = 96.5, .min_score = 95},
                            &report);
  EXPECT_EQ(examples[0].negative_ids, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(report.score_skipped, 2);
  EXPECT_EQ(report.short_examples, 2);
  // Equal to a bound is inside it.
  examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3, .max_score = 96, .min_score = 96});
  EXPECT_EQ(examples[0].negative_ids, (std::vector<std::string>{"n1"}));
  EXPECT_THROW(mine_negatives(f.run, f.judgments, std::cref(f), {.max_score = 1, .min_score = 2}), ConfigError);
  EXPECT_THROW(mine_negatives(f.run, f.judgments, std::cref(f), {.max_score = std::nan("")}), ConfigError);
}

// A negative score (a cosine below 0) lowers the ceiling too: -0.5 - 0.05 x 0.5 = -0.525, where (1 - margin) x -0.5
// would have raised it to -0.475 (sentence-transformers' #3819).
TEST(Mine, TheRelativeMarginOfANegativeScoreStaysBelowIt) {
  Fixture f;
  f.texts = {{"p", "alpha"}, {"close", "beta"}, {"far", "gamma"}};
  f.run["q"] = {{"p", -0.5}, {"close", -0.51}, {"far", -0.6}};
  f.judgments.by_query["q"] = {{"p", 1}};
  EXPECT_EQ(mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 2, .relative_margin = 0.05})[0].negative_ids,
            (std::vector<std::string>{"far"}));
}

// A positive the ranking does not list scores below every listed candidate: under a margin none is taken.
TEST(Mine, APositiveBelowTheRankingsDepthLeavesItsQueryWithoutNegatives) {
  Fixture f = one_query();
  f.run["q1"] = ranked({"p1", "copy", "judged0", "n1", "n2", "n3"});  // p2 is not in the top 6
  MineReport report;
  const auto examples = mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3, .relative_margin = 0.05}, &report);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_TRUE(examples[0].negative_ids.empty());
  EXPECT_EQ(report.positives_below_depth, 1);
  EXPECT_EQ(report.margin_skipped, 4);
  EXPECT_EQ(report.short_examples, 2);
  EXPECT_EQ(mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 3}, &report)[0].negative_ids.size(), 3u)
      << "without a margin the same ranking gives three";
}

TEST(Mine, BadOptionsAreConfigErrors) {
  const Fixture f = one_query();
  EXPECT_THROW(mine_negatives(f.run, f.judgments, std::cref(f), {.negatives = 0}), ConfigError);
  EXPECT_THROW(mine_negatives(f.run, f.judgments, std::cref(f), {.skip_top = -1}), ConfigError);
  EXPECT_THROW(mine_negatives(f.run, f.judgments, std::cref(f), {.max_overlap = 0}), ConfigError);
  EXPECT_THROW(mine_negatives(f.run, f.judgments, std::cref(f), {.max_overlap = 1.5}), ConfigError);
  EXPECT_THROW(mine_negatives(f.run, f.judgments, std::cref(f), {.relative_margin = 1}), ConfigError);
  EXPECT_THROW(mine_negatives(f.run, f.judgments, std::cref(f), {.relative_margin = std::nan("")}), ConfigError);
  EXPECT_THROW(mine_negatives(f.run, f.judgments, std::cref(f), {.absolute_margin = INFINITY}), ConfigError);
}

// Random corpora of short word lists, random rankings and judgments: the rule holds for every example and the
// result does not depend on anything but the inputs.
TEST(Mine, RandomRankingsNeverYieldAPositiveOrNearDuplicate) {
  std::mt19937 rng(11);
  for (int round = 0; round < 50; ++round) {
    Fixture f;
    for (int d = 0; d < 40; ++d) {
      std::string text;
      for (int w = 0; w < 4; ++w) text += "w" + std::to_string(rng() % 8) + " ";
      f.texts["d" + std::to_string(d)] = text;
    }
    for (int q = 0; q < 6; ++q) {
      const std::string qid = "q" + std::to_string(q);
      std::vector<std::string> ids;
      for (int d = 0; d < 40; ++d) ids.push_back("d" + std::to_string(d));
      std::shuffle(ids.begin(), ids.end(), rng);
      ids.resize(25);
      f.run[qid] = ranked(ids);
      for (int j = 0; j < 3; ++j) f.judgments.by_query[qid]["d" + std::to_string(rng() % 40)] = static_cast<int>(rng() % 3);
    }
    const MineOptions options{.negatives = 5, .skip_top = static_cast<int64_t>(rng() % 3), .max_overlap = 0.7};
    const auto examples = mine_negatives(f.run, f.judgments, std::cref(f), options);
    EXPECT_EQ(examples.size(), [&] {
      size_t n = 0;
      for (const auto& [q, grades] : f.judgments.by_query)
        for (const auto& [d, g] : grades) n += g > 0;
      return n;
    }());
    for (const auto& e : examples) {
      const auto& grades = f.judgments.by_query.at(e.query_id);
      EXPECT_GT(grades.at(e.positive_id), 0);
      EXPECT_LE(e.negative_ids.size(), 5u);
      EXPECT_EQ(std::set<std::string>(e.negative_ids.begin(), e.negative_ids.end()).size(), e.negative_ids.size());
      for (const auto& n : e.negative_ids) {
        const auto g = grades.find(n);
        EXPECT_TRUE(g == grades.end() || g->second <= 0) << n << " is judged relevant for " << e.query_id;
        for (const auto& [d, grade] : grades)
          if (grade > 0) {
            EXPECT_LT(jaccard(word_set(f.texts.at(n)), word_set(f.texts.at(d))), 0.7);
          }
      }
    }
    EXPECT_EQ(examples == mine_negatives(f.run, f.judgments, std::cref(f), options), true);
  }
}

}  // namespace
}  // namespace ragmig::eval
