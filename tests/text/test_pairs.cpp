// Training examples: the pairs files (JSONL in ragmig's, FlagEmbedding's and sentence-transformers' column names,
// TSV triples) and their errors, and examples derived from BEIR qrels.
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
  const auto ex = read_pairs(path);
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_EQ(ex[0].negatives, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(ex[1].positive, "p2");
  EXPECT_EQ(ex[1].more_positives, (std::vector<std::string>{"p2b"}));  // judged too, trained on: the first
  EXPECT_EQ(ex[1].negatives, (std::vector<std::string>{"n3"}));
  EXPECT_TRUE(ex[2].negatives.empty());
  EXPECT_EQ(ex[0].positive_key, 0);
  EXPECT_EQ(ex[1].positive_key, 1);
  EXPECT_EQ(ex[2].positive_key, 0);  // same positive text
}

TEST(Pairs, ErrorsNameTheField) {
  ScratchDir dir;
  const auto check = [&](const std::string& name, const std::string& row, const std::string& part) {
    const std::string text = "{\"query\":\"q\",\"positive\":\"p\"}\n" + row + "\n";
    expect_error<DataError>([&] { read_pairs(write_text(dir / name, text)); }, {name + ":2", part});
  };
  check("a.jsonl", "{\"positive\":\"p\"}", "\"query\"");
  check("b.jsonl", "{\"query\":\"q\"}", "\"positive\"");
  check("c.jsonl", "{\"query\":\"q\",\"positive\":3}", "\"positive\" must be a string");
  check("d.jsonl", "{\"query\":\"q\",\"pos\":[]}", "\"pos\" is empty");
  check("e.jsonl", "{\"query\":\"q\",\"pos\":\"p\"}", "\"pos\" must be an array");
  check("f.jsonl", "{\"query\":\"q\",\"positive\":\"p\",\"negatives\":[\"n\",1]}", "\"negatives\"[1]");
  check("g.jsonl", "{\"query\":[1],\"positive\":\"p\"}", "\"query\" must be a string");
  check("h.jsonl", "not json", "not valid JSON");
  check("i.jsonl", "{\"query\":\"q\",\"anchor\":\"a\",\"positive\":\"p\"}", "both \"query\" and \"anchor\"");
  check("j.jsonl", "{\"query\":\"q\",\"positive\":\"p\",\"answer\":\"a\"}", "both \"positive\" and \"answer\"");
  check("l.jsonl", "{\"query\":null,\"positive\":\"p\"}", "\"query\" must be a string, got null");
  check("m.jsonl", "{\"query\":\"q\",\"positive\":\"p\",\"negative_1\":\"a\",\"negative_3\":\"c\"}",
        "has \"negative_3\" but no \"negative_2\"");
  check("n.jsonl", "{\"query\":\"q\",\"positive\":\"p\",\"negatives\":[\"a\"],\"negative_1\":\"b\"}",
        "both \"negatives\" and \"negative_1\"");
  check("o.jsonl", "{\"query\":\"q\",\"positive\":\"p\",\"negative\":[\"a\"]}",
        "\"negative\" must be a string");
  check("t.jsonl", "{\"query\":\"\",\"positive\":\"p\"}", "field \"query\" is blank");
  check("u.jsonl", "{\"anchor\":\"q\",\"answer\":\" \\t\"}", "field \"answer\" is blank");
  check("v.jsonl", "{\"query\":\"q\",\"pos\":[\"p\",\"\"]}", "field \"pos\"[1] is blank");
  check("w.jsonl", "{\"query\":\"q\",\"positive\":\"p\",\"negative_1\":\"\"}", "field \"negative_1\" is blank");
  check("p.jsonl", "{\"query\":\"q\",\"positive\":\"p\",\"neg\":[\"a\",null]}", "\"neg\"[1] must be a string");
  check("q.jsonl", "{\"text\":\"q\",\"positive\":\"p\"}",
        "missing field \"query\", \"anchor\" or \"question\"");
}

// The rows sentence-transformers' datasets give with `Dataset.to_json` (tests/hf/pairs_datasets.py writes them
// with the datasets library itself): column names are what tells the columns apart, in any order.
TEST(Pairs, ReadsSentenceTransformersDatasetColumns) {
  ScratchDir dir;
  const auto rows = [](const std::string& more_negatives) {
    return "{\"anchor\": \"a1\", \"positive\": \"p1\", \"negative\": \"n1\"}\n"
           "{\"negative_2\": \"m2\", \"query\": \"q2\", \"negative_1\": \"m1\", \"positive\": \"p2\"," +
           more_negatives + " \"negative_x\": 1}\n\n{\"question\": \"q3\", \"answer\": \"p1\", \"id\": 17}\n";
  };
  const auto path = write_text(dir / "st.jsonl", rows(" \"negative_10\": \"x\","));
  ASSERT_THROW(read_pairs(path), DataError);  // negative_10 without negative_3..9
  write_text(dir / "st.jsonl", rows(""));
  const auto ex = read_pairs(path);
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_EQ(ex[0].query, "a1");
  EXPECT_EQ(ex[0].negatives, (std::vector<std::string>{"n1"}));
  EXPECT_EQ(ex[1].query, "q2");
  EXPECT_EQ(ex[1].negatives, (std::vector<std::string>{"m1", "m2"}));  // by number; negative_x is another column
  EXPECT_EQ(ex[2].query, "q3");
  EXPECT_EQ(ex[2].positive, "p1");
  EXPECT_TRUE(ex[2].negatives.empty());
  EXPECT_EQ(ex[2].positive_key, ex[0].positive_key);
  EXPECT_EQ(read_pairs(path, 2).size(), 2u);
}

// MS MARCO's triples: query<TAB>positive<TAB>negative, any number of negatives, an optional header.
TEST(Pairs, ReadsTsvTriples) {
  ScratchDir dir;
  const auto path = write_text(dir / "triples.tsv",
                               "query\tpositive\tnegative\n"
                               "what is bm25\tBM25 ranks documents.\tPlants grow.\n"
                               "\n"
                               "q2\tp2\n"
                               "q3\tBM25 ranks documents.\tn1\tn2\r\n");
  const auto ex = read_pairs(path);
  ASSERT_EQ(ex.size(), 3u);
  EXPECT_EQ(ex[0].query, "what is bm25");
  EXPECT_EQ(ex[0].negatives, (std::vector<std::string>{"Plants grow."}));
  EXPECT_TRUE(ex[1].negatives.empty());
  EXPECT_EQ(ex[2].negatives, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(ex[2].positive_key, ex[0].positive_key);
  EXPECT_TRUE(ex[0].query_id.empty());

  // Without a header the first line is a pair.
  EXPECT_EQ(read_pairs(write_text(dir / "b.tsv", "q\tp\n")).front().query, "q");
  expect_error<DataError>([&] { read_pairs(write_text(dir / "c.tsv", "q\tp\nonly a query\n")); },
                          {"c.tsv:2", "query<TAB>positive"});
  // A blank text is an error naming its column; tabs at a line's end are no negative; a line of tabs is blank.
  expect_error<DataError>([&] { read_pairs(write_text(dir / "d.tsv", "q\tp\tn\n\t\t\n\t\tn\n")); },
                          {"d.tsv:3", "column 1 (query) is blank"});
  expect_error<DataError>([&] { read_pairs(write_text(dir / "f.tsv", "q\t \n")); }, {"f.tsv:1", "column 2 (positive)"});
  expect_error<DataError>([&] { read_pairs(write_text(dir / "g.tsv", "q\tp\t\tn\n")); },
                          {"g.tsv:1", "column 3 (a negative) is blank"});
  EXPECT_TRUE(read_pairs(write_text(dir / "h.tsv", "q\tp\t\t\n")).front().negatives.empty());
  expect_error<DataError>([&] { read_pairs(write_text(dir / "e.tsv", "query\tpositive\n\n")); },
                          {"e.tsv", "no training pairs"});
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

  // A blank query or document is no example (a benchmark may have them; evaluation counts them).
  b.queries.push_back({"q3", " \t"});
  b.query_index["q3"] = 2;
  b.corpus.docs.push_back({"d3", "", "\n"});
  b.corpus.index_of["d3"] = 2;
  Qrels with_blanks = qrels;
  with_blanks.entries.push_back({"q3", "d1", 1, 6});
  with_blanks.entries.push_back({"q1", "d3", 1, 7});
  with_blanks.entries.push_back({"q3", "d3", 0, 8});  // score 0: no example, not counted
  int64_t blank = -1;
  const auto kept = examples_from_beir(b, with_blanks, &blank);
  EXPECT_EQ(blank, 2);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[2].query, "second?");
  EXPECT_EQ(examples_from_beir(b, qrels, &blank).size(), 3u);
  EXPECT_EQ(blank, 0);

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
