// The real `ragmig beir`: SciFact's training pairs as MS MARCO-style TSV triples made into a BEIR folder, which
// `ragmig eval` scores on its test split and `ragmig mine` mines on its train split; SQuAD pairs made into one that
// `ragmig train` trains on (its pairs/train.jsonl) and evaluates on (its test split) as it goes; refusals that
// write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "../train/train_fixture.h"
#include "core/atomic_file.h"
#include "support/process.h"
#include "support/test_support.h"
#include "text/beir.h"
#include "text/pairs.h"

namespace ragmig::testing {
namespace {

namespace fs = std::filesystem;

ProcessResult ragmig(std::vector<std::string> args) {
  args.insert(args.begin(), RAGMIG_BINARY);
  return run_process(args);
}

// SciFact's judged training pairs, one "claim<TAB>abstract" line each (tabs and line ends in texts made blanks).
std::string scifact_triples(const fs::path& scifact) {
  const auto beir = text::read_beir(scifact.string());
  std::string out;
  for (const auto& e : text::examples_from_beir(beir, text::read_qrels(text::qrels_path(scifact.string(), "train")))) {
    std::string line = e.query + "\t" + e.positive;
    std::replace_if(line.begin() + static_cast<std::ptrdiff_t>(e.query.size()) + 1, line.end(),
                    [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
    out += line + "\n";
  }
  return out;
}

TEST(BeirCli, SciFactPairsBecomeAFolderThatEvalScoresAndMineMines) {
  const fs::path scifact = data_dir() / "beir/scifact";
  RAGMIG_REQUIRE_DATA("beir/scifact");
  ScratchDir dir;
  write_file_atomic(dir / "pairs.tsv", scifact_triples(scifact));
  const auto made = ragmig({"beir", (dir / "pairs.tsv").string(), "--out", (dir / "beir").string(),
                            "--test-queries", "100", "--json"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const auto counts = output_json(made);
  EXPECT_EQ(counts["examples"], 919);
  EXPECT_GE(counts["queries"].get<int>(), 800);  // 809 claims; a few share their text
  // Every row of a train query is a training row; qrels hold each (claim, abstract) once.
  EXPECT_GE(counts["train_pairs"].get<int>(), counts["train_qrels"].get<int>());
  EXPECT_GE(counts["train_pairs"].get<int>() + counts["test_qrels"].get<int>(), 900);

  // BM25 on the made folder's test split: 100 claims against the abstracts the pairs hold. Ids that did not line
  // up between queries, corpus and qrels would score 0.
  const auto scored = ragmig({"eval", "--data", (dir / "beir").string(), "--split", "test", "--retriever", "bm25",
                              "--json", "--no-cache", "--threads", "1"});
  ASSERT_EQ(scored.exit_code, 0) << scored.output;
  const auto result = output_json(scored);
  EXPECT_EQ(result["queries"], 100);
  EXPECT_EQ(result["corpus"], counts["documents"]);
  EXPECT_GT(result["ndcg@10"].get<double>(), 0.6) << scored.output;

  // Mining the train split: negatives of train queries only, never a judged positive.
  const auto mined = ragmig({"mine", "--data", (dir / "beir").string(), "--out", (dir / "negatives.jsonl").string(),
                             "--negatives", "2", "--depth", "20", "--no-cache", "--threads", "1", "--quiet"});
  ASSERT_EQ(mined.exit_code, 0) << mined.output;
  const auto test_qrels = text::read_qrels(text::qrels_path((dir / "beir").string(), "test"));
  std::set<std::string> test_queries;
  for (const auto& e : test_qrels.entries) test_queries.insert(e.query_id);
  const auto rows = text::read_pairs((dir / "negatives.jsonl").string());
  EXPECT_GT(rows.size(), 700u);
  // A claim is judged against up to five abstracts, a row for each: no negative is any of its query's positives.
  std::map<std::string, std::set<std::string>> positives;
  for (const auto& e : text::read_qrels(text::qrels_path((dir / "beir").string(), "train")).entries)
    if (e.score > 0) positives[e.query_id].insert(e.doc_id);
  const std::string mined_rows = read_file(dir / "negatives.jsonl");
  std::istringstream lines(mined_rows);
  size_t checked = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto row = nlohmann::json::parse(line);
    const std::string query = row["query_id"];
    EXPECT_EQ(test_queries.count(query), 0u) << query;
    for (const std::string id : row["negative_ids"]) {
      EXPECT_EQ(positives[query].count(id), 0u) << id << " is a positive of " << query;
      ++checked;
    }
  }
  EXPECT_GT(checked, rows.size()) << "most rows hold two negatives";
}

// data.pairs with data.beir: the pairs (with their hard negatives) are what is trained on, the folder what the
// rungs evaluate on; the queries held out for validation come from the pairs' train split, never the test one.
TEST(BeirCli, TheFolderIsTrainedOnThroughItsPairsAndEvaluatedOnItsTestSplit) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "squad.jsonl", 240);
  const auto made = ragmig({"beir", (dir / "squad.jsonl").string(), "--out", (dir / "beir").string(),
                            "--test-queries", "40", "--json"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "beir" / "pairs" / "train.jsonl"));
  const auto trained = ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string(), "--quiet",
                               "--set", "data.beir=\"" + (dir / "beir").string() + "\"", "--set",
                               "data.split=\"train\"", "--set", "data.holdout_queries=5", "--set",
                               "eval.split=\"test\"", "--set", "eval.at_steps=[2]", "--set", "eval.k=10", "--set",
                               "train.max_steps=4"});
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  std::vector<int64_t> evaluated;
  for (const auto& e : read_events(dir / "run"))
    if (e["event"] == "eval") evaluated.push_back(e["step"].get<int64_t>());
  EXPECT_EQ(evaluated, (std::vector<int64_t>{2, 4}));
  const auto result = nlohmann::json::parse(read_file(dir / "run" / "result.json"));
  EXPECT_TRUE(result.contains("recall@10")) << result.dump();
  const auto training = nlohmann::json::parse(read_file(dir / "run" / "model" / "ragmig.json"))["training"];
  EXPECT_EQ(training["split"], "train");
  ASSERT_EQ(training["held_out_queries"].size(), 5u) << training.dump();
  const auto test_qrels = text::read_qrels(text::qrels_path((dir / "beir").string(), "test"));
  for (const auto& id : training["held_out_queries"])
    for (const auto& e : test_qrels.entries) EXPECT_NE(e.query_id, id.get<std::string>());
}

TEST(BeirCli, RefusalsWriteNothing) {
  ScratchDir dir;
  write_file_atomic(dir / "pairs.tsv", "q1\tp1\nq2\tp2\nonly a query\n");
  const auto bad = ragmig({"beir", (dir / "pairs.tsv").string(), "--out", (dir / "a").string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find((dir / "pairs.tsv").string() + ":3"), std::string::npos) << bad.output;
  EXPECT_FALSE(fs::exists(dir / "a"));

  write_file_atomic(dir / "pairs.tsv", "q1\tp1\nq2\tp2\n");
  const auto all = ragmig({"beir", (dir / "pairs.tsv").string(), "--out", (dir / "a").string(), "--test-queries", "2"});
  EXPECT_EQ(all.exit_code, 2) << all.output;
  EXPECT_NE(all.output.find("takes all 2; none is left to train on"), std::string::npos) << all.output;
  EXPECT_FALSE(fs::exists(dir / "a"));

  fs::create_directories(dir / "b");
  const auto exists = ragmig({"beir", (dir / "pairs.tsv").string(), "--out", (dir / "b").string()});
  EXPECT_EQ(exists.exit_code, 2) << exists.output;
  EXPECT_NE(exists.output.find("exists"), std::string::npos) << exists.output;
  EXPECT_TRUE(fs::is_empty(dir / "b"));
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_TRUE(entry.path().filename() == "pairs.tsv" || entry.path().filename() == "b") << entry.path();
}

}  // namespace
}  // namespace ragmig::testing
