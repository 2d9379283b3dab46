// A BEIR folder from pairs (text/beir_from_pairs.h): ids made from texts or taken from the rows, every passage a
// document once, every pair a qrels row once, the seeded test split, the refusals, and the folder written and
// read back by the BEIR, qrels and pairs readers.
#include "text/beir_from_pairs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/error.h"
#include "support/test_support.h"
#include "text/query_holdout.h"
#include "text_test_util.h"

namespace ragmig::text {
namespace {

using ragmig::testing::ScratchDir;
using ragmig::testing::expect_error;
using ragmig::testing::write_text;

TrainingExample pair(std::string query, std::string positive, std::vector<std::string> negatives = {},
                     std::string id = "") {
  return {std::move(id), std::move(query), std::move(positive), std::move(negatives), 0, {}};
}

TEST(BeirFromPairs, OneDocumentPerPassageOneQueryPerTextOneQrelPerPair) {
  const std::vector<TrainingExample> rows = {pair("what is x", "x is a letter", {"y too", "z"}),
                                             pair("what is y", "y too"),
                                             pair("what is x", "x is a letter"),  // the same pair again
                                             pair("what is x", "x, the 24th letter", {"z"})};
  const PairsFolder f = beir_from_pairs(rows, 0, kTestSplitSeed, "p.jsonl");
  ASSERT_EQ(f.corpus.size(), 4u);
  EXPECT_EQ(f.corpus[0].id, "d1");
  EXPECT_EQ(f.corpus[0].text, "x is a letter");
  EXPECT_EQ(f.corpus[1].text, "y too");  // a negative of one row is the positive of another: one document
  EXPECT_EQ(f.corpus[3].text, "x, the 24th letter");
  ASSERT_EQ(f.queries.size(), 2u);
  EXPECT_EQ(f.queries[0].id, "q1");
  EXPECT_EQ(f.queries[1].text, "what is y");
  ASSERT_EQ(f.train.size(), 3u);
  EXPECT_EQ(f.train[1].query_id, "q2");
  EXPECT_EQ(f.train[1].doc_id, "d2");
  EXPECT_EQ(f.train[2].doc_id, "d4");
  EXPECT_EQ(f.train[2].score, 1);
  EXPECT_TRUE(f.test.empty());
  ASSERT_EQ(f.train_pairs.size(), 4u);  // every row, with its id, negatives kept
  EXPECT_EQ(f.train_pairs[3].query_id, "q1");
  EXPECT_EQ(f.train_pairs[0].negatives, (std::vector<std::string>{"y too", "z"}));
}

// FlagEmbedding's rows judge several passages: every one is a qrels row, and the written rows keep them all.
TEST(BeirFromPairs, EveryPositiveOfAPosArrayIsJudged) {
  ScratchDir dir;
  const auto path = write_text(dir / "flag.jsonl",
                               "{\"query\": \"what is x\", \"pos\": [\"x1\", \"x2\"], \"neg\": [\"y\"]}\n"
                               "{\"query\": \"what is y\", \"pos\": [\"y\"], \"neg\": [\"x2\"]}\n");
  const auto rows = read_pairs(path);
  ASSERT_EQ(rows[0].more_positives, (std::vector<std::string>{"x2"}));
  const PairsFolder f = beir_from_pairs(rows, 0, kTestSplitSeed, path);
  ASSERT_EQ(f.train.size(), 3u);
  EXPECT_EQ(f.train[1].query_id, "q1");
  EXPECT_EQ(f.train[1].doc_id, "d2");  // x2
  write_pairs_folder(f, (dir / "beir").string());
  const auto again = read_pairs((dir / "beir" / "pairs" / "train.jsonl").string());
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].positive, "x1");
  EXPECT_EQ(again[0].more_positives, (std::vector<std::string>{"x2"}));
  EXPECT_EQ(again[0].negatives, (std::vector<std::string>{"y"}));
  EXPECT_TRUE(again[1].more_positives.empty());
}

TEST(BeirFromPairs, TheTestSplitIsTheSeededCarveOfTheIds) {
  std::vector<TrainingExample> rows;
  for (int i = 0; i < 40; ++i)
    rows.push_back(
        pair("query " + std::to_string(i % 20), "passage " + std::to_string(i), {}, "id" + std::to_string(i % 20)));
  const PairsFolder f = beir_from_pairs(rows, 5, 99, "p.jsonl");
  std::vector<std::string> ids;
  for (const auto& q : f.queries) ids.push_back(q.id);
  const auto carved = carve_queries(ids, 5, 99);
  ASSERT_EQ(f.test.size(), 10u);  // two pairs per query
  for (const auto& e : f.test) EXPECT_NE(std::find(carved.begin(), carved.end(), e.query_id), carved.end());
  EXPECT_EQ(f.train.size(), 30u);
  EXPECT_EQ(f.train_pairs.size(), 30u);
  for (const auto& e : f.train_pairs) EXPECT_EQ(std::find(carved.begin(), carved.end(), e.query_id), carved.end());
  EXPECT_NE(beir_from_pairs(rows, 5, 7, "p.jsonl").test.front().query_id, f.test.front().query_id)
      << "another seed, most likely other queries";
}

// Without ids in the rows, ids are made by first appearance, but the test split is carved by the query texts:
// the same file in another order holds out the same queries (their ids may differ).
TEST(BeirFromPairs, ARowOrderDoesNotChangeWhichQueriesAreTested) {
  std::vector<TrainingExample> rows;
  for (int i = 0; i < 60; ++i) rows.push_back(pair("query " + std::to_string(i % 30), "passage " + std::to_string(i)));
  const auto tested = [](const std::vector<TrainingExample>& in) {
    const PairsFolder f = beir_from_pairs(in, 8, kTestSplitSeed, "p.jsonl");
    std::map<std::string, std::string> text_of;
    for (const auto& q : f.queries) text_of[q.id] = q.text;
    std::set<std::string> texts;
    for (const auto& e : f.test) texts.insert(text_of.at(e.query_id));
    return texts;
  };
  const auto before = tested(rows);
  EXPECT_EQ(before.size(), 8u);
  std::reverse(rows.begin(), rows.end());
  EXPECT_EQ(tested(rows), before);
  std::rotate(rows.begin(), rows.begin() + 17, rows.end());
  EXPECT_EQ(tested(rows), before);
}

TEST(BeirFromPairs, Refusals) {
  expect_error<DataError>([] { beir_from_pairs({pair("a", "p", {}, "q1"), pair("b", "p")}, 0, 1, "p.jsonl"); },
                          {"p.jsonl", "1 of 2 examples have a query_id"});
  expect_error<DataError>(
      [] { beir_from_pairs({pair("a", "p", {}, "q1"), pair("b", "p", {}, "q1")}, 0, 1, "p.jsonl"); },
      {"p.jsonl: example 2: query_id \"q1\" names two query texts"});
  expect_error<DataError>([] { beir_from_pairs({pair("a", "p", {}, "q\t1")}, 0, 1, "p.jsonl"); },
                          {"example 1", "\"q\\t1\"", "tab or a line break"});
  expect_error<DataError>([] { beir_from_pairs({pair("a", "p"), pair("b", "p")}, 2, 1, "p.jsonl"); },
                          {"a test split of 2 queries takes all 2"});
}

TEST(BeirFromPairs, TheFolderReadsBackAsBeirQrelsAndPairs) {
  ScratchDir dir;
  const std::vector<TrainingExample> rows = {pair("what is x", "x is a letter", {"z"}), pair("what is y", "y too"),
                                             pair("what is z", "z, the last")};
  const PairsFolder f = beir_from_pairs(rows, 1, kTestSplitSeed, "p.jsonl");
  const std::string out = (dir / "beir").string();
  write_pairs_folder(f, out);
  const BeirFolder beir = read_beir(out);
  ASSERT_EQ(beir.corpus.docs.size(), 4u);
  EXPECT_EQ(document_text(beir.corpus.docs[1]), "z");  // no title: the text as it was
  EXPECT_EQ(beir.queries.size(), 3u);
  const Qrels train = read_qrels(qrels_path(out, "train")), test = read_qrels(qrels_path(out, "test"));
  EXPECT_EQ(train.entries.size(), 2u);
  ASSERT_EQ(test.entries.size(), 1u);
  const auto examples = examples_from_beir(beir, test);
  EXPECT_EQ(examples.front().positive, rows[std::stoi(test.entries[0].query_id.substr(1)) - 1].positive);
  const auto trained = read_pairs((dir / "beir" / "pairs" / "train.jsonl").string());
  ASSERT_EQ(trained.size(), 2u);
  for (const auto& e : trained) EXPECT_NE(e.query_id, test.entries[0].query_id);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1) << "no temporary left beside it";

  // Without a test split there is no test.tsv.
  write_pairs_folder(beir_from_pairs(rows, 0, kTestSplitSeed, "p.jsonl"), (dir / "all").string());
  EXPECT_FALSE(std::filesystem::exists(dir / "all" / "qrels" / "test.tsv"));
  EXPECT_EQ(read_qrels(qrels_path((dir / "all").string(), "train")).entries.size(), 3u);
}

}  // namespace
}  // namespace ragmig::text
