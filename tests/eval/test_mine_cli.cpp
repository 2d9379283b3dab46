// The real `ragmig mine`: BM25 negatives for SciFact's train split checked row by row against its qrels and
// corpus, dense negatives from a model folder on the toy folder, the mined file trained on by `ragmig train`,
// and refusals that write nothing.
#include <gtest/gtest.h>

#include <set>

#include "../train/train_fixture.h"
#include "core/atomic_file.h"
#include "eval/qrels.h"
#include "eval_fixture.h"
#include "text/beir.h"
#include "text/pairs.h"

namespace ragmig::testing {
namespace {

ProcessResult run_mine(std::vector<std::string> args) {
  args.insert(args.begin(), {RAGMIG_BINARY, "mine"});
  return run_process(args);
}

std::vector<nlohmann::json> rows_of(const std::filesystem::path& file) {
  std::vector<nlohmann::json> rows;
  std::istringstream in(read_file(file));
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

TEST(MineCli, SciFactBm25NegativesAreNeverJudgedRelevantAndCarryTheCorpusText) {
  const auto scifact = data_dir() / "beir/scifact";
  RAGMIG_REQUIRE_DATA("beir/scifact");
  ScratchDir dir;
  const auto out = dir / "negatives.jsonl";
  const auto r = run_mine({"--data", scifact.string(), "--out", out.string(), "--negatives", "4", "--depth", "30",
                           "--skip-top", "1", "--no-cache", "--threads", "1", "--json", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto summary = output_json(r);
  const auto beir = text::read_beir(scifact.string());
  const auto judged = eval::judgments_from(text::read_qrels(text::qrels_path(scifact.string(), "train")));
  const auto rows = rows_of(out);
  EXPECT_EQ(static_cast<int64_t>(rows.size()), summary["examples"].get<int64_t>());
  EXPECT_GE(rows.size(), 900u);  // 919 judged pairs in train.tsv
  EXPECT_GT(summary["relevant_skipped"].get<int64_t>(), 0) << "BM25 ranks many positives in its top 30";
  int64_t full = 0;
  for (const auto& row : rows) {
    const auto& grades = judged.by_query.at(row["query_id"].get<std::string>());
    EXPECT_GT(grades.at(row["positive_id"].get<std::string>()), 0);
    const auto ids = row["negative_ids"].get<std::vector<std::string>>();
    ASSERT_EQ(ids.size(), row["negatives"].size());
    full += ids.size() == 4;
    for (size_t i = 0; i < ids.size(); ++i) {
      const auto g = grades.find(ids[i]);
      EXPECT_TRUE(g == grades.end() || g->second <= 0) << ids[i] << " is a positive of " << row["query_id"];
      EXPECT_EQ(row["negatives"][i], text::document_text(beir.corpus.docs[static_cast<size_t>(beir.corpus.index_of.at(ids[i]))]));
    }
    EXPECT_EQ(row["query"], beir.queries[static_cast<size_t>(beir.query_index.at(row["query_id"].get<std::string>()))].text);
  }
  EXPECT_EQ(full, static_cast<int64_t>(rows.size()) - summary["short_examples"].get<int64_t>());
  // The trainer's reader takes the file as it is.
  EXPECT_EQ(text::read_pairs(out.string()).size(), rows.size());
}

// Positive-aware mining on SciFact's BM25 ranking: candidates within 5 % of a positive's score are passed over and
// counted, queries whose positive lies below the depth are said, and a negative margin writes nothing; so do score
// bounds, and crossed ones.
TEST(MineCli, MarginsPassOverCandidatesThatScoreCloseToAPositive) {
  const auto scifact = data_dir() / "beir/scifact";
  RAGMIG_REQUIRE_DATA("beir/scifact");
  ScratchDir dir;
  const auto out = dir / "negatives.jsonl";
  const std::vector<std::string> common = {"--data", scifact.string(), "--out", out.string(), "--negatives", "4",
                                           "--depth", "30", "--no-cache", "--threads", "1", "--json", "--quiet"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), common.begin(), common.end());
    return run_mine(extra);
  };
  const auto r = with({"--relative-margin", "0.05"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto summary = output_json(r);
  EXPECT_GT(summary["margin_skipped"].get<int64_t>(), 0) << summary.dump();
  EXPECT_GT(summary["positives_below_depth"].get<int64_t>(), 0) << "BM25 misses some positives in its top 30";
  EXPECT_EQ(static_cast<int64_t>(rows_of(out).size()), summary["examples"].get<int64_t>());
  std::filesystem::remove(out);
  const auto bad = with({"--absolute-margin", "-1"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--absolute-margin must be >= 0"), std::string::npos) << bad.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  // Bounds on the negatives' own BM25 scores: some of the top 30 score above 30 or below 15.
  const auto bounded = with({"--max-score", "30", "--min-score", "15"});
  ASSERT_EQ(bounded.exit_code, 0) << bounded.output;
  const auto counts = output_json(bounded);
  EXPECT_GT(counts["score_skipped"].get<int64_t>(), 0) << counts.dump();
  EXPECT_EQ(counts["margin_skipped"], 0);
  std::filesystem::remove(out);
  const auto crossed = with({"--min-score", "2", "--max-score", "1"});
  EXPECT_EQ(crossed.exit_code, 2) << crossed.output;
  EXPECT_NE(crossed.output.find("--min-score <= --max-score"), std::string::npos) << crossed.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(MineCli, DenseNegativesFromAModelFolderFeedTraining) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  std::filesystem::copy_file(dir / "beir/qrels/test.tsv", dir / "beir/qrels/train.tsv");
  write_random_model(dir / "model");
  const auto out = dir / "negatives.jsonl";
  // No --retriever: with --model it is dense.
  const auto r = run_mine({"--data", (dir / "beir").string(), "--model", (dir / "model").string(),
                           "--out", out.string(), "--negatives", "2", "--no-cache", "--precision", "fp32", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mined 4 examples"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("from dense's top 100"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("left out 1 queries"), std::string::npos) << r.output;  // q4's text is blank
  const auto rows = rows_of(out);
  ASSERT_EQ(rows.size(), 4u);  // q1:d1, q2:d2, q2:d5, q3:d4
  for (const auto& row : rows) {
    EXPECT_EQ(row["negative_ids"].size(), 2u);
    if (row["query_id"] == "q2") {
      for (const auto& id : row["negative_ids"]) EXPECT_TRUE(id != "d2" && id != "d5") << row.dump();
    }
  }
  // `ragmig train` on the mined pairs with their hard negatives, one query held out by the ids the rows carry.
  write_file_atomic(dir / "train.toml", tiny_config(out, "") );
  const auto trained = run_ragmig({"train", (dir / "train.toml").string(), "--run-dir", (dir / "run").string(), "--set",
                                   "train.max_steps=2", "--set", "train.batch_size=2", "--set", "train.hard_negatives=2",
                                   "--set", "eval.split=\"\"", "--set", "data.holdout_queries=1", "--quiet"});
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const auto training = nlohmann::json::parse(read_file(dir / "run/model/ragmig.json"))["training"];
  EXPECT_EQ(training["split"], "train");
  ASSERT_EQ(training["held_out_queries"].size(), 1u) << training.dump();
  const std::string held = training["held_out_queries"][0];
  EXPECT_TRUE(held == "q1" || held == "q2" || held == "q3") << held;
}

// --dimensions ranks with the leading part of each embedding, as `ragmig eval --dimensions`; the folder's
// truncate_dim is the default; more than the model has is refused and nothing is written.
TEST(MineCli, DimensionsRankWithTheLeadingPartAndDefaultToTheFoldersTruncateDim) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  std::filesystem::copy_file(dir / "beir/qrels/test.tsv", dir / "beir/qrels/train.tsv");
  write_random_model(dir / "model");
  const auto mine = [&](const std::string& out, std::vector<std::string> more) {
    std::vector<std::string> args = {"--data", (dir / "beir").string(), "--retriever", "dense", "--model",
                                     (dir / "model").string(), "--out", (dir / out).string(), "--negatives", "2",
                                     "--no-cache", "--precision", "fp32", "--quiet"};
    args.insert(args.end(), more.begin(), more.end());
    return run_mine(args);
  };
  const auto four = mine("four.jsonl", {"--dimensions", "4"});
  ASSERT_EQ(four.exit_code, 0) << four.output;
  const auto full = mine("full.jsonl", {});
  ASSERT_EQ(full.exit_code, 0) << full.output;
  EXPECT_NE(read_file(dir / "full.jsonl"), read_file(dir / "four.jsonl")) << "4 of 32 dimensions rank otherwise here";
  auto st = nlohmann::json::parse(read_file(dir / "model/config_sentence_transformers.json"));
  st["truncate_dim"] = 4;
  write_file_atomic(dir / "model/config_sentence_transformers.json", st.dump());
  const auto by_default = mine("default.jsonl", {});
  ASSERT_EQ(by_default.exit_code, 0) << by_default.output;
  EXPECT_EQ(read_file(dir / "default.jsonl"), read_file(dir / "four.jsonl"));

  const auto too_many = mine("too-many.jsonl", {"--dimensions", "33"});
  EXPECT_EQ(too_many.exit_code, 2) << too_many.output;
  EXPECT_NE(too_many.output.find("--dimensions 33: the model's embeddings have 32 dimensions"), std::string::npos)
      << too_many.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "too-many.jsonl"));
}

TEST(MineCli, RefusalsWriteNothing) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  const auto out = dir / "negatives.jsonl";
  auto r = run_mine({"--data", (dir / "beir").string(), "--split", "test", "--out", out.string(), "--no-cache"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("leak"), std::string::npos) << r.output;
  r = run_mine({"--data", (dir / "beir").string(), "--split", "dev", "--out", out.string(), "--no-cache"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("dev"), std::string::npos) << r.output;
  std::filesystem::copy_file(dir / "beir/qrels/test.tsv", dir / "beir/qrels/train.tsv");
  r = run_mine({"--data", (dir / "beir").string(), "--out", out.string(), "--no-cache", "--depth", "2", "--skip-top", "2"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_mine({"--data", (dir / "beir").string(), "--out", out.string(), "--no-cache", "--max-overlap", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--max-overlap"), std::string::npos) << r.output;
  r = run_mine({"--data", (dir / "beir").string(), "--out", out.string(), "--no-cache", "--retriever", "rerank"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_mine({"--data", (dir / "beir").string(), "--out", (dir / "no/such.jsonl").string(), "--no-cache"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no such folder to write it in"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("searching"), std::string::npos) << "refused before mining: " << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out.string() + ".run.tmp"));
}

}  // namespace
}  // namespace ragmig::testing
