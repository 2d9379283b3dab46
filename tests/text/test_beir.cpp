// BEIR readers: small hand-written folders for every rule and error, then the shared SQuAD and SciFact
// folders (gzip) when present.
#include "text/beir.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "support/test_support.h"
#include "text_test_util.h"

namespace ragmig::text {
namespace {

using ragmig::testing::ScratchDir;
using ragmig::testing::data_dir;
using ragmig::testing::expect_error;
using ragmig::testing::write_text;

TEST(Beir, ReadsCorpusWithOptionalTitlesAndNumericIds) {
  ScratchDir dir;
  const auto path = write_text(dir / "corpus.jsonl",
                               "{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"one\"}\n"
                               "\n"
                               "{\"_id\": 42, \"text\": \"two\", \"metadata\": {}}\n"
                               "{\"_id\": \"d3\", \"title\": null, \"text\": \"thr\\u00e9e\"}\n");
  const Corpus c = read_corpus(path);
  ASSERT_EQ(c.docs.size(), 3u);
  EXPECT_EQ(c.docs[0].title, "T");
  EXPECT_EQ(c.docs[1].id, "42");
  EXPECT_EQ(c.docs[1].title, "");
  EXPECT_EQ(c.docs[2].text, "thr\u00e9e");
  EXPECT_EQ(c.index_of.at("42"), 1);
  EXPECT_EQ(c.index_of.at("d3"), 2);
}

TEST(Beir, CorpusErrorsNameFileAndLine) {
  ScratchDir dir;
  expect_error<DataError>(
      [&] { read_corpus(write_text(dir / "dup.jsonl", "{\"_id\":\"a\",\"text\":\"x\"}\n{\"_id\":\"a\",\"text\":\"y\"}\n")); },
      {"dup.jsonl:2", "duplicate document id 'a'"});
  expect_error<DataError>([&] { read_corpus(write_text(dir / "noid.jsonl", "{\"text\":\"x\"}\n")); },
                          {"noid.jsonl:1", "missing field \"_id\""});
  expect_error<DataError>(
      [&] { read_corpus(write_text(dir / "badjson.jsonl", "{\"_id\":\"a\",\"text\":\"x\"}\n{\"_id\": \n")); },
      {"badjson.jsonl:2", "not valid JSON"});
  expect_error<DataError>([&] { read_corpus(write_text(dir / "notext.jsonl", "{\"_id\":\"a\"}\n")); },
                          {"notext.jsonl:1", "\"text\""});
  expect_error<DataError>([&] { read_corpus(write_text(dir / "typed.jsonl", "{\"_id\":\"a\",\"text\":5}\n")); },
                          {"typed.jsonl:1", "\"text\" must be a string"});
  expect_error<DataError>([&] { read_corpus(write_text(dir / "floatid.jsonl", "{\"_id\":1.5,\"text\":\"x\"}\n")); },
                          {"floatid.jsonl:1", "\"_id\""});
  expect_error<DataError>([&] { read_corpus(write_text(dir / "array.jsonl", "[1,2]\n")); },
                          {"array.jsonl:1", "object"});
  expect_error<DataError>([&] { read_corpus(write_text(dir / "empty.jsonl", "\n\n")); }, {"empty.jsonl is empty"});
  EXPECT_THROW(read_corpus((dir / "absent.jsonl").string()), IoError);
}

TEST(Beir, ReadsQueriesAndFolder) {
  ScratchDir dir;
  write_text(dir / "b" / "corpus.jsonl", "{\"_id\":\"d1\",\"title\":\"\",\"text\":\"x\"}\n");
  write_text(dir / "b" / "queries.jsonl", "{\"_id\":\"q1\",\"text\":\"what?\"}\n{\"_id\":7,\"text\":\"who\"}\n");
  write_text(dir / "b" / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n");
  const BeirFolder b = read_beir((dir / "b").string());
  EXPECT_EQ(b.corpus.docs.size(), 1u);
  ASSERT_EQ(b.queries.size(), 2u);
  EXPECT_EQ(b.query_index.at("7"), 1);
  EXPECT_EQ(qrels_path((dir / "b").string(), "test"), (dir / "b" / "qrels" / "test.tsv").string());
  EXPECT_THROW(qrels_path((dir / "b").string(), "dev"), IoError);
  EXPECT_THROW(read_beir((dir / "nothing").string()), IoError);
  expect_error<DataError>(
      [&] { read_queries(write_text(dir / "q.jsonl", "{\"_id\":\"q\",\"text\":\"a\"}\n{\"_id\":\"q\",\"text\":\"b\"}\n")); },
      {"q.jsonl:2", "duplicate query id 'q'"});
}

TEST(Beir, ReadsQrelsInBeirAndTrecForms) {
  ScratchDir dir;
  const Qrels beir = read_qrels(write_text(dir / "a.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\n\nq1\td 2\t0\nq2\td3\t2\n"));
  ASSERT_EQ(beir.entries.size(), 3u);
  EXPECT_EQ(beir.entries[1].doc_id, "d 2");  // tabs separate; a space inside an id survives
  EXPECT_EQ(beir.entries[1].score, 0);
  EXPECT_EQ(beir.entries[2].line, 5);
  EXPECT_EQ(beir.path, (dir / "a.tsv").string());

  const Qrels headless = read_qrels(write_text(dir / "b.tsv", "q1\td1\t1\n"));
  ASSERT_EQ(headless.entries.size(), 1u);
  EXPECT_EQ(headless.entries[0].line, 1);

  const Qrels trec = read_qrels(write_text(dir / "c.txt", "301 0 FBIS3-10082 1\n301  Q0\tFBIS3-10169 0\n302 0 d9 -1\n"));
  ASSERT_EQ(trec.entries.size(), 3u);
  EXPECT_EQ(trec.entries[0].query_id, "301");
  EXPECT_EQ(trec.entries[1].doc_id, "FBIS3-10169");
  EXPECT_EQ(trec.entries[2].score, -1);

  const Qrels decimal = read_qrels(write_text(dir / "d.tsv", "q\td\t1.0\n"));
  EXPECT_EQ(decimal.entries[0].score, 1);
}

TEST(Beir, QrelsErrorsNameFileAndLine) {
  ScratchDir dir;
  expect_error<DataError>([&] { read_qrels(write_text(dir / "cols.tsv", "q\td\t1\nq\td\n")); },
                          {"cols.tsv:2", "columns"});
  expect_error<DataError>([&] { read_qrels(write_text(dir / "score.tsv", "q\td\t1\nq\td\thigh\n")); },
                          {"score.tsv:2", "score is not an integer: 'high'"});
  expect_error<DataError>([&] { read_qrels(write_text(dir / "half.tsv", "q\td\t0.5\n")); }, {"half.tsv:1"});
  expect_error<DataError>([&] { read_qrels(write_text(dir / "blank.tsv", "q\t\t1\n")); }, {"blank.tsv:1", "empty"});
  expect_error<DataError>([&] { read_qrels(write_text(dir / "hdr.tsv", "query-id\tcorpus-id\tscore\n")); },
                          {"hdr.tsv is empty"});
  EXPECT_THROW(read_qrels((dir / "absent.tsv").string()), IoError);
}

TEST(Beir, SquadTrainFolder) {
  RAGMIG_REQUIRE_DATA("beir/squad-train/corpus.jsonl.gz");
  const std::string dir = (data_dir() / "beir/squad-train").string();
  const BeirFolder b = read_beir(dir);
  EXPECT_EQ(b.corpus.docs.size(), 18891u);
  EXPECT_EQ(b.queries.size(), 87599u);
  const Qrels train = read_qrels(qrels_path(dir, "train"));
  const Qrels test = read_qrels(qrels_path(dir, "test"));
  EXPECT_EQ(train.entries.size(), 78449u);
  EXPECT_EQ(test.entries.size(), 9150u);
  for (const auto& e : train.entries) {
    ASSERT_TRUE(b.corpus.index_of.count(e.doc_id)) << e.doc_id;
    ASSERT_TRUE(b.query_index.count(e.query_id)) << e.query_id;
  }
}

TEST(Beir, SciFactFolder) {
  RAGMIG_REQUIRE_DATA("beir/scifact/corpus.jsonl.gz");
  const std::string dir = (data_dir() / "beir/scifact").string();
  const BeirFolder b = read_beir(dir);
  EXPECT_EQ(b.corpus.docs.size(), 5183u);
  EXPECT_EQ(b.queries.size(), 1109u);
  const Qrels test = read_qrels(qrels_path(dir, "test"));
  std::set<std::string> queries;
  for (const auto& e : test.entries) {
    queries.insert(e.query_id);
    ASSERT_TRUE(b.corpus.index_of.count(e.doc_id)) << e.doc_id;
  }
  EXPECT_EQ(queries.size(), 300u);
}

}  // namespace
}  // namespace ragmig::text
