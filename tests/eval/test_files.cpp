// The file formats of eval: TREC runs (written, read back exactly, malformed lines named by file:line),
// qrels turned into judgments (BEIR TSV and TREC agree; conflicts and unknown ids reported), and the
// evaluation cache (keys follow content; damaged entries are refused, not trusted).
#include <gtest/gtest.h>

#include <random>

#include "core/atomic_file.h"
#include "core/error.h"
#include "eval/eval_cache.h"
#include "eval/qrels.h"
#include "eval/run_file.h"
#include "support/test_support.h"
#include "text/beir.h"

namespace ragmig::eval {
namespace {

using testing::ScratchDir;

TEST(RunFile, RoundTripsScoresExactly) {
  ScratchDir dir;
  TrecRun run;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-5, 5);
  for (int q = 0; q < 5; ++q)
    for (int d = 0; d < 20; ++d)  // (append, not "q" + ...: GCC 12 warns falsely on the latter)
      run[std::string("q").append(std::to_string(q))].push_back(
          {std::string("doc-").append(std::to_string(d)), u(rng)});
  run["q0"].push_back({"tiny", 1e-30});
  const std::string path = (dir / "run.txt").string();
  write_trec_run(path, run, "tag1");
  EXPECT_EQ(read_trec_run(path), run);
  const std::string text = read_file(path);
  EXPECT_EQ(text.substr(0, text.find('\n')).substr(0, 12), "q0 Q0 doc-0 ");
  EXPECT_NE(text.find(" 21 1e-30 tag1\n"), std::string::npos) << "ranks count from 1 in list order";
}

struct BadRun {
  friend std::ostream& operator<<(std::ostream& os, const BadRun& c) { return os << c.name; }
  std::string name, text, expected;
};
class BadRunTest : public ::testing::TestWithParam<BadRun> {};

TEST_P(BadRunTest, NamesFileAndLine) {
  ScratchDir dir;
  const std::string path = (dir / "run.txt").string();
  write_file_atomic(path, GetParam().text);
  try {
    read_trec_run(path);
    FAIL() << "accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":" + GetParam().expected), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, BadRunTest,
                         ::testing::Values(BadRun{"five_fields", "q Q0 d 1 2.0 t\nq Q0 e 2 1.0\n", "2: expected"},
                                           BadRun{"bad_score", "q Q0 d 1 high t\n", "1: score"},
                                           BadRun{"bad_rank", "\nq Q0 d one 1.0 t\n", "2: rank"},
                                           BadRun{"nan_score", "q Q0 d 1 nan t\n", "1: score"},
                                           BadRun{"duplicate_doc", "q Q0 d 1 2 t\nq Q0 e 2 1 t\nq Q0 d 3 0 t\n",
                                                  "3: document 'd'"}),
                         [](const auto& info) { return info.param.name; });

TEST(RunFile, IdsWithSpacesCannotBeWritten) {
  ScratchDir dir;
  TrecRun run;
  run["q 1"] = {{"d", 1}};
  EXPECT_THROW(write_trec_run((dir / "r").string(), run, "t"), ConfigError);
  run.clear();
  run["q"] = {{"d", 1}};
  EXPECT_THROW(write_trec_run((dir / "r").string(), run, "two words"), ConfigError);
}

// A run written a query at a time: past its 1 MB buffer (so in several writes), in place only at commit(), and a
// writer stopped by a bad id leaves neither the run nor its temporary behind, nor touches an older run there.
TEST(RunFile, AWriterPutsTheRunInPlaceOnlyWhole) {
  ScratchDir dir;
  const std::string path = (dir / "run.txt").string();
  TrecRun run;
  for (int q = 0; q < 300; ++q)
    for (int d = 0; d < 200; ++d)
      run[std::string("query-").append(std::to_string(q))].push_back(
          {std::string("document-").append(std::to_string(d)), 1.0 / (d + 1)});
  {
    TrecRunWriter writer(path, "t");
    for (const auto& [qid, docs] : run) writer.add(qid, docs);
    EXPECT_FALSE(std::filesystem::exists(path)) << "in place before commit";
    writer.commit();
  }
  EXPECT_GT(std::filesystem::file_size(path), 2u << 20);
  EXPECT_EQ(read_trec_run(path), run);
  try {
    TrecRunWriter writer(path, "t");
    for (const auto& [qid, docs] : run) writer.add(qid, docs);  // more than a buffer's worth written
    writer.add("q", {{"a document", 1}});
    FAIL() << "an id with a space was written";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'a document'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_trec_run(path), run) << "the older run was touched";
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 1)
      << "a temporary was left behind";
}

TEST(Qrels, BeirTsvAndTrecGiveTheSameJudgments) {
  ScratchDir dir;
  write_file_atomic(dir / "beir.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td1\t1\n");
  write_file_atomic(dir / "trec.txt", "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n");
  const Judgments a = judgments_from(text::read_qrels((dir / "beir.tsv").string()));
  const Judgments b = judgments_from(text::read_qrels((dir / "trec.txt").string()));
  EXPECT_EQ(a.by_query, b.by_query);
  EXPECT_EQ(a.by_query.at("q1").at("d1"), 2);
  EXPECT_EQ(a.by_query.at("q1").at("d2"), 0);
}

TEST(Qrels, RepeatedRowsAgreeingAreOneConflictingAreAnError) {
  ScratchDir dir;
  write_file_atomic(dir / "same.tsv", "q1\td1\t1\nq1\td1\t1\n");
  EXPECT_EQ(judgments_from(text::read_qrels((dir / "same.tsv").string())).by_query.at("q1").size(), 1u);
  write_file_atomic(dir / "conflict.tsv", "q1\td1\t1\nq2\td1\t1\nq1\td1\t2\n");
  try {
    judgments_from(text::read_qrels((dir / "conflict.tsv").string()));
    FAIL();
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("conflict.tsv:3"), std::string::npos) << what;
    EXPECT_NE(what.find("line 1"), std::string::npos) << what;
  }
}

TEST(Qrels, UnknownIdsAreCountedAndWarnedAbout) {
  ScratchDir dir;
  write_file_atomic(dir / "corpus.jsonl", "{\"_id\": \"d1\", \"text\": \"x\"}\n{\"_id\": \"d2\", \"text\": \"y\"}\n");
  write_file_atomic(dir / "queries.jsonl", "{\"_id\": \"q1\", \"text\": \"x\"}\n");
  write_file_atomic(dir / "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td9\t1\nq7\td1\t1\nq8\td2\t1\n");
  const text::BeirFolder beir = text::read_beir(dir.path().string());
  QrelsCheck check;
  const Judgments j = resolve_judgments(text::read_qrels((dir / "qrels.tsv").string()), beir, &check);
  EXPECT_EQ(check.unknown_query_rows, 2);
  EXPECT_EQ(check.unknown_doc_rows, 1);
  ASSERT_EQ(check.warnings.size(), 2u);
  EXPECT_NE(check.warnings[0].find("qrels.tsv:4, " + (dir / "qrels.tsv").string() + ":5"), std::string::npos)
      << check.warnings[0];
  EXPECT_NE(check.warnings[1].find("qrels.tsv:3"), std::string::npos) << check.warnings[1];
  ASSERT_EQ(j.by_query.size(), 1u);
  EXPECT_EQ(j.by_query.at("q1").size(), 2u) << "the unknown document stays relevant, as trec_eval would count it";
}

TEST(EvalCache, KeysFollowContent) {
  ScratchDir dir;
  write_file_atomic(dir / "a.txt", "hello");
  const std::string h1 = hash_file((dir / "a.txt").string());
  EXPECT_EQ(h1.size(), 16u);
  EXPECT_EQ(h1, "a430d84680aabd0b") << "FNV-1a 64 of 'hello'";
  std::filesystem::create_directories(dir / "m/sub");
  write_file_atomic(dir / "m/config.json", "{}");
  write_file_atomic(dir / "m/sub/w.bin", "weights");
  const std::string f1 = hash_folder((dir / "m").string());
  write_file_atomic(dir / "m/sub/w.bin", "weightz");
  const std::string f2 = hash_folder((dir / "m").string());
  std::filesystem::rename(dir / "m/sub/w.bin", dir / "m/sub/v.bin");
  const std::string f3 = hash_folder((dir / "m").string());
  EXPECT_NE(f1, f2);
  EXPECT_NE(f2, f3) << "a renamed file changes the key";
  EXPECT_NE(hash_parts({"ab", "c"}), hash_parts({"a", "bc"}));
  EXPECT_THROW(hash_file((dir / "missing").string()), IoError);
}

TEST(EvalCache, MatricesRoundTripAndDamageIsReportedNotTrusted) {
  ScratchDir dir;
  const EvalCache cache((dir / "cache").string());
  index::FloatMatrix m(3, 2);
  m.data = {1, 2, 3, 4, 5, 6.5f};
  const std::string path = cache.path("passages", "0123", ".emb");
  std::vector<std::string> warnings;
  EXPECT_FALSE(cache.load_matrix(path, warnings).has_value());
  EXPECT_EQ(cache.store_matrix(path, m, warnings), "miss");
  auto back = cache.load_matrix(path, warnings);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rows, 3);
  EXPECT_EQ(back->data, m.data);
  EXPECT_TRUE(warnings.empty());
  std::string bytes = read_file(path);
  bytes[bytes.size() - 8] ^= 0x10;
  write_file_atomic(path, bytes);
  EXPECT_FALSE(cache.load_matrix(path, warnings).has_value());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("checksum"), std::string::npos) << warnings[0];
  EXPECT_FALSE(EvalCache("").enabled());
  EXPECT_EQ(EvalCache("").store_matrix(path, m, warnings), "off");
}

// The cache is an optimisation: a folder that cannot be made, or an entry that cannot be written, is a warning
// and leaves no file behind (the full-disk case through the real binary is in tests/badinput).
TEST(EvalCache, AnUnwritableEntryIsAWarningNotAnError) {
  ScratchDir dir;
  write_file_atomic(dir / "file", "x");
  index::FloatMatrix m(1, 1);
  std::vector<std::string> warnings;
  const EvalCache under_a_file((dir / "file" / "cache").string());
  EXPECT_EQ(under_a_file.store_matrix(under_a_file.path("passages", "k", ".emb"), m, warnings), "unstored");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot create the cache folder"), std::string::npos) << warnings[0];

  const EvalCache cache((dir / "cache").string());
  const std::string path = cache.path("index", "k", ".faiss");
  EXPECT_EQ(cache.store(
                path, [&] { throw IoError(path + ".tmp.1: write failed: No space left on device"); }, warnings),
            "unstored");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[1].find("No space left on device"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[1].find("going on without it"), std::string::npos) << warnings[1];
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace ragmig::eval
