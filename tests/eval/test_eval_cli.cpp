// The real `ragmig eval` binary: metrics of a hand-made BEIR folder worked out by hand, the run file it
// writes, the cache (a second dense evaluation embeds nothing), hybrid and re-ranking, bad input (exit 2,
// file:line), and on the shared data: SciFact BM25 against Pyserini's figure and HNSW32 against exact
// search on SQuAD embeddings of a model trained by `ragmig train`.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "../train/train_fixture.h"
#include "core/atomic_file.h"
#include "eval/encoder.h"
#include "eval/metrics.h"
#include "eval/run_file.h"
#include "eval_fixture.h"
#include "text/beir.h"

namespace ragmig::testing {
namespace {

const double kL3 = std::log2(3.0);

// BM25 on the toy folder: q1 finds only d1 (relevant, grade 2); q2 finds only d2 (one of its two relevant
// documents); q3 shares no word with any document; q4 is empty. Means over the 4 judged queries.
TEST(EvalCli, Bm25MetricsOfTheToyFolderByHand) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  const auto r = run_eval({"--data", (dir / "beir").string(), "--retriever", "bm25", "--json", "--no-cache", "--run-out",
                           (dir / "run.txt").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = eval_json(r);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["queries"], 4);
  EXPECT_NEAR(j["ndcg@10"].get<double>(), (1 + 1 / (1 + 1 / kL3)) / 4, 1e-9);
  EXPECT_NEAR(j["recall@10"].get<double>(), (1 + 0.5) / 4, 1e-9);
  EXPECT_NEAR(j["recall@20"].get<double>(), (1 + 0.5) / 4, 1e-9);
  EXPECT_NEAR(j["recall@100"].get<double>(), (1 + 0.5) / 4, 1e-9);
  EXPECT_NEAR(j["mrr@10"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(j["map@100"].get<double>(), (1 + 0.5) / 4, 1e-9);
  EXPECT_TRUE(j["seconds"].is_number());
  EXPECT_EQ(j["empty_queries"], 1);
  EXPECT_EQ(j["queries_without_terms"], 1);
  EXPECT_NE(r.output.find("warning: 1 queries have empty text (q4)"), std::string::npos) << r.output;
  EXPECT_EQ(j["cache"]["bm25_index"], "off");

  // The run file holds what was scored: evaluating it again gives the same numbers.
  const eval::TrecRun run = eval::read_trec_run((dir / "run.txt").string());
  EXPECT_EQ(run.size(), 2u) << "q3 and q4 retrieved nothing";
  EXPECT_EQ(run.at("q1").front().doc_id, "d1");
  const eval::Judgments judged = eval::judgments_from(text::read_qrels((dir / "beir/qrels/test.tsv").string()));
  const eval::MetricReport again = eval::evaluate_run(run, judged, eval::default_metrics());
  EXPECT_DOUBLE_EQ(again.value("ndcg@10"), j["ndcg@10"].get<double>());
  EXPECT_DOUBLE_EQ(again.value("map@100"), j["map@100"].get<double>());
}

TEST(EvalCli, TableOutputAndChosenMetrics) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  const auto r = run_eval({"--data", (dir / "beir").string(), "--no-cache", "--quiet", "--metrics", "ndcg@3,p@1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ndcg@3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("p@1 "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("recall@100"), std::string::npos) << r.output;
}

// A dense HNSW32 evaluation of dir/model on dir/beir, cached in dir/cache, as JSON.
std::vector<std::string> cached_dense_args(const std::filesystem::path& dir) {
  return {"--data", (dir / "beir").string(), "--retriever", "dense", "--model", (dir / "model").string(), "--index",
          "HNSW32", "--json", "--cache", (dir / "cache").string(), "--device", "cpu"};
}

// `args` and --dimensions N.
std::vector<std::string> with_dimensions(std::vector<std::string> args, const std::string& dims) {
  args.insert(args.end(), {"--dimensions", dims});
  return args;
}

// --dimensions: the leading N dimensions of the cached whole embeddings (nothing embedded again), the index keyed
// by the size; all of them is the plain evaluation; more than the model has is refused.
TEST(EvalCli, DimensionsSearchWithTheLeadingPartOfCachedEmbeddings) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  write_random_model(dir / "model");
  const std::vector<std::string> args = cached_dense_args(dir.path());
  const auto with = [&](const std::string& dims) { return with_dimensions(args, dims); };
  const auto whole = eval_json(run_eval(args));
  const auto all32 = eval_json(run_eval(with("32")));
  EXPECT_EQ(all32["ndcg@10"], whole["ndcg@10"]);
  EXPECT_EQ(all32["recall@100"], whole["recall@100"]);
  EXPECT_EQ(all32["dimensions"], 32);
  EXPECT_FALSE(whole.contains("dimensions"));

  const auto first = run_eval(with("4"));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto four = eval_json(first);
  EXPECT_EQ(four["dimensions"], 4);
  EXPECT_EQ(four["cache"]["passages"], "hit");
  EXPECT_EQ(four["cache"]["queries"], "hit");
  EXPECT_EQ(four["cache"]["index"], "miss") << "an index of 4-dimensional vectors is another entry";
  EXPECT_EQ(first.output.find("embedding"), std::string::npos) << first.output;
  EXPECT_EQ(eval_json(run_eval(with("4")))["cache"]["index"], "hit");

  const auto too_many = run_eval(with("33"));
  EXPECT_EQ(too_many.exit_code, 2) << too_many.output;
  EXPECT_NE(too_many.output.find("--dimensions 33: the model's embeddings have 32 dimensions"), std::string::npos)
      << too_many.output;
}

// A folder's truncate_dim (sentence-transformers' config_sentence_transformers.json) is the size searched unless
// --dimensions says otherwise; a size that the folder's Matryoshka sizes do not list is searched with a warning.
TEST(EvalCli, TheFoldersTruncateDimIsTheDefaultSizeAndItsMatryoshkaSizesAreChecked) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  write_random_model(dir / "model");
  const std::vector<std::string> args = cached_dense_args(dir.path());
  const auto with = [&](const std::string& dims) { return with_dimensions(args, dims); };
  const auto edit = [&](const std::string& file, const std::string& key, const nlohmann::json& value) {
    auto j = nlohmann::json::parse(read_file(dir / "model" / file));
    j[key] = value;
    write_file_atomic(dir / "model" / file, j.dump());
  };
  const auto warnings = [](const nlohmann::json& r) { return r.value("warnings", nlohmann::json::array()).dump(); };
  const auto four = eval_json(run_eval(with("4")));

  edit("config_sentence_transformers.json", "truncate_dim", 4);
  const auto r = run_eval(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto by_default = eval_json(r);
  EXPECT_EQ(by_default["dimensions"], 4);
  EXPECT_EQ(by_default["ndcg@10"], four["ndcg@10"]);
  EXPECT_EQ(by_default["recall@100"], four["recall@100"]);
  EXPECT_NE(r.output.find("dimensions: 4 of 32, the folder's truncate_dim"), std::string::npos) << r.output;
  auto table_args = args;
  table_args.erase(std::find(table_args.begin(), table_args.end(), "--json"));
  const auto table = run_eval(table_args);
  EXPECT_NE(table.output.find("\n  with the leading 4 dimensions of each embedding\n"), std::string::npos) << table.output;
  EXPECT_EQ(eval_json(run_eval(with("32")))["dimensions"], 32) << "--dimensions wins";

  edit("ragmig.json", "matryoshka_dims", {32, 8});
  EXPECT_EQ(warnings(eval_json(run_eval(with("8")))).find("matryoshka_dims"), std::string::npos);
  EXPECT_NE(warnings(eval_json(run_eval(with("6")))).find(
                "--dimensions 6: the model was trained for 32, 8, 4 dimensions (ragmig.json's matryoshka_dims)"),
            std::string::npos);
}

// A training's own evaluation with eval.dimensions (a sweep's rungs at its [eval] dimensions) ranks as `ragmig eval
// --dimensions` does: the same recall@3 of the model it saved.
TEST(EvalCli, TrainingsEvalDimensionsRankAsEvalDimensions) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  write_file_atomic(dir / "beir/queries.jsonl", R"({"_id": "q1", "text": "where does lava erupt"}
{"_id": "q2", "text": "how do glaciers carve valleys"}
{"_id": "q3", "text": "tectonic plate boundaries"}
)");
  write_file_atomic(dir / "beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t1\nq2\td5\t1\nq3\td4\t1\n");
  std::filesystem::copy_file(dir / "beir/qrels/test.tsv", dir / "beir/qrels/train.tsv");
  write_random_model(dir / "model");
  write_file_atomic(dir / "train.toml", "[data]\nbeir = \"" + (dir / "beir").string() +
                                            "\"\nmax_query_tokens = 16\nmax_passage_tokens = 32\n[model]\ninit = \"" +
                                            (dir / "model").string() +
                                            "\"\n[train]\nmax_steps = 2\nbatch_size = 2\nwarmup_steps = 0\n"
                                            "[eval]\nsplit = \"test\"\nk = 3\ndimensions = 4\n");
  const auto trained = run_ragmig({"train", (dir / "train.toml").string(), "--run-dir", (dir / "run").string(), "--quiet"});
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const auto done = nlohmann::json::parse(read_file(dir / "run/result.json"));
  const auto r = run_eval({"--data", (dir / "beir").string(), "--retriever", "dense", "--model",
                           (dir / "run/model").string(), "--metrics", "recall@3", "--dimensions", "4",
                           "--max-query-tokens", "16", "--max-passage-tokens", "32", "--precision", "fp32",
                           "--no-cache", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NEAR(done["recall@3"].get<double>(), eval_json(r)["recall@3"].get<double>(), 1e-9);

  const auto too_many = run_ragmig({"train", (dir / "train.toml").string(), "--run-dir", (dir / "run2").string(),
                                    "--quiet", "--set", "eval.dimensions=33"});
  EXPECT_EQ(too_many.exit_code, 2) << too_many.output;
  EXPECT_NE(too_many.output.find("config key 'eval.dimensions': 33 exceeds the model's 32 embedding dimensions"),
            std::string::npos)
      << too_many.output;
}

TEST(EvalCli, SecondDenseEvaluationComesFromTheCache) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  write_random_model(dir / "model");
  const std::vector<std::string> args = cached_dense_args(dir.path());
  const auto first = run_eval(args);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto j1 = eval_json(first);
  EXPECT_EQ(j1["cache"]["passages"], "miss");
  EXPECT_EQ(j1["cache"]["queries"], "miss");
  EXPECT_EQ(j1["cache"]["index"], "miss");
  EXPECT_NE(first.output.find("embedding 6 passages"), std::string::npos) << first.output;
  EXPECT_DOUBLE_EQ(j1["ann"]["recall@10_vs_exact"].get<double>(), 1.0) << "6 vectors: HNSW is exact";

  const auto second = run_eval(args);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const auto j2 = eval_json(second);
  EXPECT_EQ(j2["cache"]["passages"], "hit");
  EXPECT_EQ(j2["cache"]["queries"], "hit");
  EXPECT_EQ(j2["cache"]["index"], "hit");
  EXPECT_EQ(second.output.find("embedding"), std::string::npos) << "nothing is embedded again:\n" << second.output;
  EXPECT_EQ(second.output.find("loading model"), std::string::npos) << second.output;
  EXPECT_EQ(j2["ndcg@10"], j1["ndcg@10"]);
  EXPECT_EQ(j2["recall@100"], j1["recall@100"]);

  // A prompt given on the command line is another key for its side only; the folder's own are in its hash.
  auto prompted = args;
  prompted.insert(prompted.end(), {"--query-prompt", "lava "});
  const auto jp = eval_json(run_eval(prompted));
  EXPECT_EQ(j1["prompts"], nlohmann::json({{"query", ""}, {"passage", ""}}));
  EXPECT_EQ(jp["prompts"], nlohmann::json({{"query", "lava "}, {"passage", ""}})) << "the output says which were used";
  EXPECT_EQ(jp["cache"]["queries"], "miss");
  EXPECT_EQ(jp["cache"]["passages"], "hit");
  EXPECT_NE(jp["ndcg@10"], nullptr);
  EXPECT_EQ(eval_json(run_eval(prompted))["cache"]["queries"], "hit");

  // Another model is another key: embedded afresh, not served the first model's vectors.
  write_random_model(dir / "model2", 2);
  auto other = args;
  other[5] = (dir / "model2").string();
  const auto j3 = eval_json(run_eval(other));
  EXPECT_EQ(j3["cache"]["passages"], "miss");

  // A damaged entry is reported and rebuilt.
  for (const auto& entry : std::filesystem::directory_iterator(dir / "cache")) {
    if (entry.path().filename().string().rfind("passages-", 0) != 0) continue;
    std::string bytes = read_file(entry.path());
    bytes[bytes.size() - 6] ^= 0x22;
    write_file_atomic(entry.path(), bytes);
  }
  const auto damaged = run_eval(args);
  ASSERT_EQ(damaged.exit_code, 0) << damaged.output;
  EXPECT_NE(damaged.output.find("damaged cache entry"), std::string::npos) << damaged.output;
  EXPECT_EQ(eval_json(damaged)["ndcg@10"], j1["ndcg@10"]);
}

// Run as a scheduler's job (RAGMIG_RUN_DIR set, as the executor sets it), `ragmig eval` reports through the job
// protocol: start, a progress event per stage line, done. The monitor's stall rule hears from a long
// evaluation (the main job's evaluation of SciFact on a busy 2-core CPU took 16 min and raised a false "stall").
TEST(EvalCli, RunAsASchedulersJobItReportsProgressInItsEventsFile) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  write_random_model(dir / "model");
  std::filesystem::create_directories(dir / "run");
  const std::vector<std::string> argv = {
      "/usr/bin/env", "RAGMIG_RUN_DIR=" + (dir / "run").string(), RAGMIG_BINARY, "eval", "--data",
      (dir / "beir").string(), "--retriever", "dense", "--model", (dir / "model").string(), "--no-cache", "--device",
      "cpu", "--quiet"};
  const auto r = run_process(argv);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<nlohmann::json> events;
  std::istringstream lines(read_file(dir / "run" / "events.jsonl"));
  for (std::string line; std::getline(lines, line);) events.push_back(nlohmann::json::parse(line));
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front()["event"], "start");
  EXPECT_EQ(events.back()["event"], "done");
  size_t loading = 0, embedding = 0;  // the lines' positions
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    EXPECT_EQ(events[i]["event"], "progress");
    const std::string message = events[i]["message"];
    if (message.rfind("loading model ", 0) == 0) loading = i;
    if (message == "embedding 6 passages") embedding = i;
  }
  EXPECT_GT(loading, 0u);
  EXPECT_GT(embedding, loading) << "the model loads before what it embeds is said";
  for (const auto& e : events) EXPECT_TRUE(e["time"].is_number());
  EXPECT_EQ(r.output.find("embedding"), std::string::npos) << "--quiet still keeps stderr quiet";
}

// The encoder says after each forward pass how many texts are embedded: what the stage lines above count.
TEST(EvalCli, TheEncoderSaysHowManyTextsAreEmbeddedAfterEachPass) {
  ScratchDir dir;
  write_random_model(dir / "model");
  eval::EmbedOptions options;
  options.batch_size = 2;  // a pass holds 2 x 8 tokens: several passes
  options.max_passage_tokens = 8;
  eval::Encoder encoder((dir / "model").string(), "cpu", options);
  const std::vector<std::string> texts = {"lava", "the glaciers carve valleys", "coral", "deserts",
                                          "rivers and forests"};
  std::vector<size_t> said;
  const auto m = encoder.embed(texts, false, [&](size_t done) { said.push_back(done); });
  EXPECT_EQ(m.rows, 5);
  ASSERT_GE(said.size(), 2u);
  EXPECT_TRUE(std::is_sorted(said.begin(), said.end()));
  EXPECT_EQ(std::adjacent_find(said.begin(), said.end()), said.end()) << "each pass embeds some";
  EXPECT_EQ(said.back(), texts.size());
}

// Re-ranking only re-orders BM25's candidates, and on the toy folder each query has at most one, so the
// metrics are BM25's. Linear fusion with all weight on dense ranks exactly as dense does.
TEST(EvalCli, RerankKeepsCandidatesAndLinearFusionCanBeDense) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  write_random_model(dir / "model");
  const std::vector<std::string> base = {"--data", (dir / "beir").string(), "--model", (dir / "model").string(), "--json",
                                         "--cache", (dir / "cache").string(), "--quiet"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    const auto r = run_eval(a);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return eval_json(r);
  };
  const auto rerank = with({"--retriever", "rerank"});
  auto bm25_args = base;
  bm25_args.erase(bm25_args.begin() + 2, bm25_args.begin() + 4);  // --model: BM25 uses none
  bm25_args.insert(bm25_args.end(), {"--retriever", "bm25"});
  const auto bm25 = eval_json(run_eval(bm25_args));
  EXPECT_EQ(rerank["ndcg@10"], bm25["ndcg@10"]);
  EXPECT_EQ(rerank["cache"]["passages"], "miss");
  const auto dense = with({"--retriever", "dense"});
  const auto linear = with({"--retriever", "hybrid", "--fusion", "Linear(alpha=1)"});
  EXPECT_EQ(linear["ndcg@10"], dense["ndcg@10"]);
  EXPECT_EQ(linear["recall@3"], dense["recall@3"]);
  EXPECT_EQ(linear["cache"]["passages"], "hit");
  const auto rrf = with({"--retriever", "hybrid"});
  EXPECT_EQ(rrf["fusion"], "RRF(k=60)");
  EXPECT_GE(rrf["recall@100"].get<double>(), bm25["recall@100"].get<double>()) << "fusion keeps BM25's documents";
  // --model without --retriever scores the model (not BM25 beside a model it never loads).
  const auto implied = with({});
  EXPECT_EQ(implied["retriever"], "dense");
  EXPECT_EQ(implied["ndcg@10"], dense["ndcg@10"]);
}

struct BadInput {
  friend std::ostream& operator<<(std::ostream& os, const BadInput& c) { return os << c.name; }
  std::string name;
  std::vector<std::string> args;  // after --data DIR (unless they give their own --data)
  std::string corpus, queries, qrels;  // replacements for the toy files ("" = keep)
  std::string expected;
};

class EvalBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(EvalBadInput, ExitsTwoNamingTheProblem) {
  const BadInput& c = GetParam();
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  write_random_model(dir / "model");
  if (!c.corpus.empty()) write_file_atomic(dir / "beir/corpus.jsonl", c.corpus);
  if (!c.queries.empty()) write_file_atomic(dir / "beir/queries.jsonl", c.queries);
  if (!c.qrels.empty()) write_file_atomic(dir / "beir/qrels/test.tsv", c.qrels);
  std::vector<std::string> args = {"--no-cache"};
  if (std::find(c.args.begin(), c.args.end(), "--data") == c.args.end()) args = {"--data", (dir / "beir").string(), "--no-cache"};
  for (std::string a : c.args) {
    if (a == "MODEL") a = (dir / "model").string();
    if (a == "DATA") a = (dir / "beir").string();
    args.push_back(a);
  }
  const auto r = run_eval(args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(c.expected), std::string::npos) << "expected '" << c.expected << "' in:\n" << r.output;
  if (c.name == "not_a_model_folder") {
    EXPECT_EQ(r.output.find("reading"), std::string::npos) << r.output;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EvalBadInput,
    ::testing::Values(
        BadInput{"malformed_corpus_line", {}, "{\"_id\": \"d1\", \"text\": \"a\"}\n{oops\n", "", "", "corpus.jsonl:2"},
        BadInput{"duplicate_document", {}, "{\"_id\": \"d1\", \"text\": \"a\"}\n{\"_id\": \"d1\", \"text\": \"b\"}\n", "", "",
                 "corpus.jsonl:2: duplicate document id 'd1'"},
        BadInput{"query_without_text", {}, "", "{\"_id\": \"q1\"}\n", "", "queries.jsonl:1"},
        BadInput{"malformed_qrels_score", {}, "", "", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\tlots\n", "test.tsv:3"},
        BadInput{"conflicting_qrels", {}, "", "", "q1\td1\t1\nq1\td1\t2\n", "test.tsv:2"},
        BadInput{"qrels_for_no_known_query", {}, "", "", "q8\td1\t1\n", "nothing to evaluate"},
        BadInput{"unknown_split", {"--split", "dev"}, "", "", "", "no qrels for split 'dev'"},
        BadInput{"no_validation_split", {"--retriever", "hybrid", "--model", "MODEL", "--fusion", "auto"}, "", "", "",
                 "--fusion auto (its validation split, --fusion-validation train): no qrels for split 'train'"},
        BadInput{"dense_without_model", {"--retriever", "dense"}, "", "", "", "needs --model"},
        BadInput{"missing_model_folder", {"--retriever", "dense", "--model", "/no/such/model"}, "", "", "", "/no/such/model"},
        // Said before the corpus is read: --data is a folder with no model files in it.
        BadInput{"not_a_model_folder", {"--retriever", "dense", "--model", "DATA"}, "", "", "",
                 "beir: not a model folder: no "},
        BadInput{"bad_index_spec", {"--retriever", "dense", "--model", "MODEL", "--index", "HNSW"}, "", "", "", "'HNSW'"},
        BadInput{"ivf_needs_more_vectors", {"--retriever", "dense", "--model", "MODEL", "--index", "IVF64,Flat"}, "", "", "",
                 "needs at least 64 vectors"},
        BadInput{"bad_bm25_spec", {"--bm25", "BM25(k1=-1,b=0.4)"}, "", "", "", "k1 must be >= 0"},
        BadInput{"bad_fusion_spec", {"--retriever", "hybrid", "--model", "MODEL", "--fusion", "Max"}, "", "", "", "'Max'"},
        BadInput{"unknown_retriever", {"--retriever", "splade"}, "", "", "", "unknown retriever 'splade'"},
        BadInput{"bad_metric", {"--metrics", "ndcg@0"}, "", "", "", "ndcg@0"},
        BadInput{"missing_data", {"--data", "/no/such/beir"}, "", "", "", "/no/such/beir"},
        BadInput{"data_is_a_file", {"--data", "/etc/passwd"}, "", "", "",
                 "--data: /etc/passwd is a file, not a folder"},
        BadInput{"model_is_a_file", {"--model", "/etc/passwd"}, "", "", "",
                 "--model: /etc/passwd is a file, not a folder"},
        BadInput{"zero_k", {"--k", "0"}, "", "", "", "--k"},
        // Options the retriever would ignore in silence.
        BadInput{"fusion_without_hybrid", {"--fusion", "RRF(k=60)"}, "", "", "",
                 "--fusion is used by --retriever hybrid, not bm25"},
        BadInput{"model_with_bm25", {"--retriever", "bm25", "--model", "MODEL"}, "", "", "",
                 "--model is used by --retriever dense, hybrid, rerank, not bm25"},
        BadInput{"index_with_rerank", {"--retriever", "rerank", "--model", "MODEL", "--index", "HNSW32"}, "", "", "",
                 "--index is used by --retriever dense, hybrid, not rerank"},
        // Output files are checked before the evaluation, which would otherwise end on them.
        BadInput{"run_out_folder_missing", {"--run-out", "/no/such/run.trec"}, "", "", "",
                 "--run-out /no/such/run.trec: no such folder to write it in: /no/such"},
        BadInput{"out_is_a_folder", {"--out", "DATA"}, "", "", "", "beir: is a folder"}),
    [](const auto& info) { return info.param.name; });

TEST(EvalCli, QrelsNamingUnknownIdsAreCountedAndWarnedAbout) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  write_file_atomic(dir / "beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td77\t1\nq99\td2\t1\n");
  const auto r = run_eval({"--data", (dir / "beir").string(), "--json", "--no-cache", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = eval_json(r);
  EXPECT_EQ(j["qrels_unknown_queries"], 1);
  EXPECT_EQ(j["qrels_unknown_documents"], 1);
  EXPECT_EQ(j["queries"], 1);
  EXPECT_NEAR(j["recall@10"].get<double>(), 0.5, 1e-12) << "d77 still counts as relevant";
  EXPECT_NE(r.output.find("test.tsv:4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("test.tsv:3"), std::string::npos) << r.output;
}

TEST(EvalCli, HelpListsTheOptions) {
  const auto r = run_eval({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* o : {"--data", "--split", "--retriever", "--model", "--index", "--k", "--run-out", "--json", "--cache"})
    EXPECT_NE(r.output.find(o), std::string::npos) << o;
}

// The acceptance figure of the BM25 baseline: Pyserini publishes 0.665 (multifield) and 0.679 (flat).
TEST(EvalData, ScifactBm25ReachesPyserini) {
  RAGMIG_REQUIRE_DATA("beir/scifact");
  for (const char* spec : {"BM25(k1=0.9,b=0.4)", "BM25(k1=0.9,b=0.4,fields=multi)"}) {
    const auto r = run_eval({"--data", (data_dir() / "beir/scifact").string(), "--split", "test", "--retriever", "bm25", "--bm25",
                             spec, "--json", "--no-cache", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = eval_json(r);
    EXPECT_EQ(j["queries"], 300);
    EXPECT_GE(j["ndcg@10"].get<double>(), 0.655) << spec;
    EXPECT_GE(j["recall@100"].get<double>(), 0.89) << spec;
  }
}

// The ways BM25 alone is run give the same figures: built while the corpus is read and searched a chunk of
// 256 queries at a time as they are scored (no cache), the same with the index then cached, the cached index
// mapped, and a run file written (the whole run held); a damaged cache entry is a warning and is rebuilt.
// SciFact's 300 test queries span two chunks.
TEST(EvalData, Bm25StreamedCachedAndWrittenRunsAgree) {
  RAGMIG_REQUIRE_DATA("beir/scifact");
  ScratchDir dir;
  const std::vector<std::string> base = {"--data", (data_dir() / "beir/scifact").string(), "--split", "test", "--retriever",
                                         "bm25", "--json", "--quiet", "--threads", "2"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_eval(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return eval_json(r);
  };
  const std::string cache = (dir / "cache").string();
  const auto off = with({"--no-cache"});
  const auto miss = with({"--cache", cache});
  const auto hit = with({"--cache", cache});
  const auto written = with({"--no-cache", "--run-out", (dir / "run.trec").string()});
  EXPECT_EQ(off["cache"]["bm25_index"], "off");
  EXPECT_EQ(miss["cache"]["bm25_index"], "miss");
  EXPECT_EQ(hit["cache"]["bm25_index"], "hit");
  for (const char* metric : {"ndcg@10", "recall@100", "recall@1000", "map@100", "mrr@10"}) {
    EXPECT_EQ(miss[metric], off[metric]) << metric;
    EXPECT_EQ(hit[metric], off[metric]) << metric;
    EXPECT_EQ(written[metric], off[metric]) << metric;
  }
  const eval::TrecRun run = eval::read_trec_run((dir / "run.trec").string());
  EXPECT_EQ(run.size(), 300u);
  EXPECT_EQ(run.begin()->second.size(), 1000u);

  // A damaged entry (a byte flipped in place: the checksum catches it) is reported and replaced.
  std::string entry;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache))
    if (e.path().extension() == ".idx") entry = e.path().string();
  ASSERT_FALSE(entry.empty());
  std::string bytes = read_file(entry);
  bytes[bytes.size() / 2] ^= 0x20;
  write_file_atomic(entry, bytes);
  const auto repaired = with({"--cache", cache});
  EXPECT_EQ(repaired["ndcg@10"], off["ndcg@10"]);
  ASSERT_FALSE(repaired["warnings"].empty());
  EXPECT_NE(repaired["warnings"][0].get<std::string>().find("checksum"), std::string::npos) << repaired["warnings"];
  EXPECT_EQ(with({"--cache", cache})["cache"]["bm25_index"], "hit");
}

// HNSW32 at its default search parameters against exact search, on SQuAD paragraphs embedded by a model
// that `ragmig train` has just trained (40 steps of the tiny config: seconds).
TEST(EvalData, Hnsw32RecallAgainstExactOnSquadEmbeddings) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 640);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  const auto trained = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string(), "--quiet"});
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  const auto r = run_eval({"--data", (data_dir() / "beir/squad-train").string(), "--split", "test", "--retriever", "dense",
                           "--model", (dir / "run/model").string(), "--index", "HNSW32", "--max-queries", "2000",
                           "--max-passage-tokens", "64", "--max-query-tokens", "24", "--k", "10", "--json", "--cache",
                           (dir / "cache").string(), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = eval_json(r);
  EXPECT_EQ(j["queries"], 2000);
  EXPECT_EQ(j["corpus"], 18891);
  RecordProperty("hnsw32_recall_at_10_vs_exact", std::to_string(j["ann"]["recall@10_vs_exact"].get<double>()));
  EXPECT_GE(j["ann"]["recall@10_vs_exact"].get<double>(), 0.95) << j.dump(2);
  EXPECT_GT(j["recall@10"].get<double>(), 0.01) << "a trained model finds far more than chance (10 / 18891)";
}

}  // namespace
}  // namespace ragmig::testing
