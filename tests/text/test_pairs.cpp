// Training examples: the pairs JSONL format and its errors, and examples derived from BEIR qrels.
#include "text/pairs.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "support/test_support.h"
#include "text_test_util.h"

namespace ragmig::text {
namespace {

using ragmig::testing::ScratchDir;
using ragmig::testing::expect_error;
using ragmig::testing::write_text;

TEST(Pairs, ReadsBothSpellingsAndKeysPositives) {
  ScratchDir dir;
  const auto path = write_text(dir / "pairs.jsonl",
                               "{\"query\": \"q1\", \"positive\": \"p1\", \"negatives\": [\"n1\", \"n2\"]}\n"
                               "{\"query\": \"q2\", \"pos\": [\"p2\", \"p2b\"], \"neg\": [\"n3\"]}\n"
                               "{\"query\": \"q3\", \"positive\": \"p1\"}\n");
  const auto ex = read_pairs_jsonl(path);
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_EQ(ex[0].negatives, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(ex[1].positive, "p2");
  EXPECT_EQ(ex[1].negatives, (std::vector<std::string>{"n3"}));
  EXPECT_TRUE(ex[2].negatives.empty());
  EXPECT_EQ(ex[0].positive_key, 0);
  EXPECT_EQ(ex[1].positive_key, 1);
  EXPECT_EQ(ex[2].positive_key, 0);  // same positive text
}

TEST(Pairs, ErrorsNameTheField) {
  ScratchDir dir;
  const auto check = [&](const std::string& name, const std::string& row, const std::string& part) {
    expect_error<DataError>([&] { read_pairs_jsonl(write_text(dir / name, "{\"query\":\"q\",\"positive\":\"p\"}\n" + row + "\n")); },
                            {name + ":2", part});
  };
  check("a.jsonl", "{\"positive\":\"p\"}", "\"query\"");
  check("b.jsonl", "{\"query\":\"q\"}", "\"positive\"");
  check("c.jsonl", "{\"query\":\"q\",\"positive\":3}", "\"positive\" must be a string");
  check("d.jsonl", "{\"query\":\"q\",\"pos\":[]}", "\"pos\" is empty");
  check("e.jsonl", "{\"query\":\"q\",\"pos\":\"p\"}", "\"pos\" must be an array");
  check("f.jsonl", "{\"query\":\"q\",\"positive\":\"p\",\"negatives\":[\"n\",1]}", "\"negatives\"[1]");
  check("g.jsonl", "{\"query\":[1],\"positive\":\"p\"}", "\"query\" must be a string");
  check("h.jsonl", "not json", "not valid JSON");
}

TEST(Pairs, ExamplesFromBeir) {
  BeirFolder b;
  b.corpus.docs = {{"d1", "Title", "Text one."}, {"d2", "", "Text two."}};
  b.corpus.index_of = {{"d1", 0}, {"d2", 1}};
  b.queries = {{"q1", "first?"}, {"q2", "second?"}};
  b.query_index = {{"q1", 0}, {"q2", 1}};
  Qrels qrels;
  qrels.path = "qrels/train.tsv";
  qrels.entries = {{"q1", "d1", 1, 2}, {"q2", "d2", 1, 3}, {"q2", "d1", 0, 4}, {"q2", "d1", 2, 5}};
  const auto ex = examples_from_beir(b, qrels);
  ASSERT_EQ(ex.size(), 3u);  // the score-0 row is not an example
  EXPECT_EQ(ex[0].query, "first?");
  EXPECT_EQ(ex[0].positive, "Title Text one.");
  EXPECT_EQ(ex[1].positive, "Text two.");
  EXPECT_EQ(ex[0].positive_key, 0);
  EXPECT_EQ(ex[1].positive_key, 1);
  EXPECT_EQ(ex[2].positive_key, 0);

  qrels.entries.push_back({"q1", "x", 1, 6});
  expect_error<DataError>([&] { examples_from_beir(b, qrels); }, {"qrels/train.tsv:6", "unknown corpus id 'x'"});
  qrels.entries.back() = {"qz", "d1", 1, 7};
  expect_error<DataError>([&] { examples_from_beir(b, qrels); }, {"qrels/train.tsv:7", "unknown query id 'qz'"});
}

TEST(Pairs, SquadTrainExamples) {
  RAGMIG_REQUIRE_DATA("beir/squad-train/corpus.jsonl.gz");
  const std::string dir = (ragmig::testing::data_dir() / "beir/squad-train").string();
  const auto ex = examples_from_beir(read_beir(dir), read_qrels(qrels_path(dir, "train")));
  EXPECT_EQ(ex.size(), 78449u);
  std::set<int64_t> keys;
  for (const auto& e : ex) keys.insert(e.positive_key);
  EXPECT_GT(keys.size(), 15000u);
}

}  // namespace
}  // namespace ragmig::text
