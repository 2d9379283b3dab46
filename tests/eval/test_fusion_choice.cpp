// Fusion chosen on validation queries (eval/fusion_choice.h): the grid, the carved validation queries, the
// choice on hand-made rankings, and the real `ragmig eval --retriever hybrid --fusion auto` on SciFact, also
// on the queries a real `ragmig train` with data.holdout_queries left out.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <sstream>

#include "core/error.h"
#include "eval/fusion_choice.h"
#include "eval_fixture.h"
#include "text/beir.h"
#include "text/query_holdout.h"

namespace ragmig::eval {
namespace {

Judgments judged(const std::map<std::string, std::map<std::string, int>>& rows) {
  Judgments j;
  for (const auto& [q, docs] : rows)
    for (const auto& [d, g] : docs) j.by_query[q][d] = g;
  return j;
}

TEST(FusionChoice, TheGridHoldsBothPartsAloneFirstAndLast) {
  const auto grid = fusion_grid();
  ASSERT_EQ(grid.size(), 17u);
  EXPECT_EQ(grid.front(), (index::FusionSpec{index::FusionKind::kLinear, 60, 0.0}));
  EXPECT_EQ(grid[10], (index::FusionSpec{index::FusionKind::kLinear, 60, 1.0}));
  EXPECT_EQ(grid.back().kind, index::FusionKind::kRrf);
}

TEST(FusionChoice, ValidationQueriesAreNeverEvaluatedOnesAndDoNotDependOnOrder) {
  const Judgments train = judged({{"a", {{"d1", 1}}}, {"b", {{"d2", 1}}}, {"c", {{"d3", 0}}}, {"d", {{"d4", 2}}},
                                  {"e", {{"d5", 1}}}, {"f", {{"d6", 1}}}});
  const Judgments test = judged({{"b", {{"d2", 1}}}, {"x", {{"d9", 1}}}});
  const Judgments all = carve_validation(train, test, 100, 1);
  EXPECT_EQ(all.by_query.size(), 4u);  // a, d, e, f: b is evaluated, c has nothing relevant
  EXPECT_FALSE(all.by_query.count("b"));
  EXPECT_FALSE(all.by_query.count("c"));
  const Judgments two = carve_validation(train, test, 2, 1);
  EXPECT_EQ(two.by_query.size(), 2u);
  EXPECT_EQ(two.by_query, carve_validation(train, test, 2, 1).by_query);
  EXPECT_NE(two.by_query, carve_validation(train, test, 2, 99).by_query) << "another seed, another choice (here)";
  EXPECT_THROW(carve_validation(train, test, 0, 1), ConfigError);
}

// Query q's relevant document is row q. `good` lists put it first; noise lists hold random other rows.
struct Lists {
  std::vector<std::string> ids;
  HitLists good, noise, half_a, half_b;
  Judgments judgments;
};

Lists lists(int queries) {
  Lists l;
  std::mt19937 rng(3);
  for (int q = 0; q < queries; ++q) {
    l.ids.push_back("q" + std::to_string(q));
    l.judgments.by_query[l.ids.back()]["doc" + std::to_string(q)] = 1;
    std::vector<index::Hit> good = {{q, 10.0f}}, noise;
    for (int j = 0; j < 20; ++j) {
      const int other = 1000 + static_cast<int>(rng() % 500);
      good.push_back({other, 5.0f - 0.1f * static_cast<float>(j)});
      noise.push_back({other + 1, 5.0f - 0.1f * static_cast<float>(j)});
    }
    l.good.push_back(good);
    l.noise.push_back(noise);
    // Complementary parts: each finds the relevant document for half of the queries only.
    l.half_a.push_back(q % 2 ? good : noise);
    l.half_b.push_back(q % 2 ? noise : good);
  }
  return l;
}

std::string doc_name(int64_t row) { return "doc" + std::to_string(row); }

// The validation score of the fusion a choice took.
double chosen_score(const FusionChoice& c) {
  for (const auto& t : c.trials)
    if (t.spec == c.chosen) return t.score;
  ADD_FAILURE() << index::to_string(c.chosen) << " is not among the trials";
  return -1;
}

TEST(FusionChoice, AWeakDenseModelFallsBackToBm25AndAWeakBm25ToDense) {
  const Lists l = lists(40);
  const Metric ndcg = parse_metric("ndcg@10");
  const auto bm25_wins = choose_fusion(fusion_grid(), l.ids, l.noise, l.good, doc_name, l.judgments, ndcg, 10);
  EXPECT_EQ(bm25_wins.chosen, (index::FusionSpec{index::FusionKind::kLinear, 60, 0.0})) << index::to_string(bm25_wins.chosen);
  EXPECT_DOUBLE_EQ(bm25_wins.trials.front().score, 1.0);
  EXPECT_EQ(bm25_wins.queries, 40);
  EXPECT_EQ(bm25_wins.trials.size(), fusion_grid().size());
  const auto dense_wins = choose_fusion(fusion_grid(), l.ids, l.good, l.noise, doc_name, l.judgments, ndcg, 10);
  EXPECT_DOUBLE_EQ(dense_wins.trials[10].score, 1.0);
  EXPECT_DOUBLE_EQ(chosen_score(dense_wins), 1.0) << index::to_string(dense_wins.chosen);
  EXPECT_LT(dense_wins.trials.front().score, 0.1) << "BM25 alone finds nothing here";
}

TEST(FusionChoice, ComplementaryPartsAreFusedAndTheChoiceBeatsEither) {
  const Lists l = lists(40);
  const auto c = choose_fusion(fusion_grid(), l.ids, l.half_a, l.half_b, doc_name, l.judgments, parse_metric("recall@20"), 20);
  EXPECT_NEAR(c.trials.front().score, 0.5, 1e-9);  // BM25 alone
  EXPECT_NEAR(c.trials[10].score, 0.5, 1e-9);      // dense alone
  double best = 0;
  for (const auto& t : c.trials) best = std::max(best, t.score);
  EXPECT_DOUBLE_EQ(best, 1.0);
  EXPECT_DOUBLE_EQ(chosen_score(c), best) << index::to_string(c.chosen) << ": a fusion that finds both halves";
}

TEST(FusionChoice, TheDefaultIsKeptUnlessValidationClearlyPrefersAnother) {
  // Candidates: 0 and 2 the parts alone, 1 the default. Per-query scores over 8 queries.
  const std::vector<double> part_a = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
  const std::vector<double> prior = {1, 0, 1, 0, 1, 0, 1, 1};  // mean 0.625
  // A noisy winner: mean 0.6875, ahead by 0.0625 with a standard error of the difference of 0.24.
  const std::vector<double> noisy = {0, 1, 1, 0, 1, 1, 1, 0.5};
  EXPECT_EQ(pick_with_prior({part_a, prior, part_a, noisy}, 1, {0, 2}), 1u) << "a lead inside the noise keeps the default";
  // A clear winner: ahead on every query.
  const std::vector<double> clear = {1, 0.5, 1, 0.5, 1, 0.5, 1, 1};
  EXPECT_EQ(pick_with_prior({part_a, prior, part_a, clear}, 1, {0, 2}), 3u);
  // The default below a part alone is never kept, however close to the best.
  const std::vector<double> strong_part = {0.7, 0.6, 0.7, 0.6, 0.7, 0.6, 0.7, 0.6};  // mean 0.65 > 0.625
  EXPECT_EQ(pick_with_prior({strong_part, prior, part_a, noisy}, 1, {0, 2}), 3u);
  // No default in the grid (or it is the best): the best, first of equals.
  EXPECT_EQ(pick_with_prior({part_a, prior, noisy, noisy}, 9, {0}), 2u);
  EXPECT_EQ(pick_with_prior({part_a, clear, noisy}, 1, {0}), 1u);
}

TEST(FusionCli, AutoFusionOnSciFactIsChosenOnTrainQueriesAndNeverLosesToBm25ThereWithARandomModel) {
  const auto scifact = testing::data_dir() / "beir/scifact";
  RAGMIG_REQUIRE_DATA("beir/scifact");
  testing::ScratchDir dir;
  testing::write_random_model(dir / "model");
  const auto r = testing::run_eval({"--data", scifact.string(), "--retriever", "hybrid", "--model", (dir / "model").string(),
                                    "--fusion", "auto", "--fusion-validation-queries", "150", "--k", "100",
                                    "--candidates", "100", "--precision", "fp32", "--no-cache", "--json", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = testing::eval_json(r);
  ASSERT_TRUE(j.contains("fusion_choice")) << r.output;
  const auto& choice = j["fusion_choice"];
  EXPECT_EQ(choice["validation_split"], "train");
  EXPECT_EQ(choice["validation_queries"], 150);
  EXPECT_EQ(j["fusion"], choice["chosen"]);
  double chosen = -1, bm25 = -1, dense = -1;
  for (const auto& t : choice["trials"]) {
    if (t["fusion"] == choice["chosen"]) chosen = t["ndcg@10"];
    if (t["fusion"] == "Linear(alpha=0)") bm25 = t["ndcg@10"];
    if (t["fusion"] == "Linear(alpha=1)") dense = t["ndcg@10"];
  }
  ASSERT_GE(bm25, 0) << "BM25 alone is among the trials";
  ASSERT_GE(chosen, 0) << choice["chosen"] << " is among the trials";
  EXPECT_GE(chosen, bm25) << choice["chosen"] << " never loses to BM25 alone on the validation queries";
  EXPECT_GT(bm25, dense + 0.3) << "a random model is far behind BM25 on validation";
  // The parts on the test queries, side by side with the fusion: with a random model it stays at BM25's level.
  const double test_bm25 = j["parts"]["bm25"]["ndcg@10"], test_dense = j["parts"]["dense"]["ndcg@10"];
  EXPECT_GT(test_bm25, 0.6);
  EXPECT_LT(test_dense, 0.1);
  EXPECT_GT(j["ndcg@10"].get<double>(), test_bm25 - 0.02) << "the chosen fusion " << j["fusion"];
  // Choosing on the evaluated queries themselves is refused.
  const auto same = testing::run_eval({"--data", scifact.string(), "--retriever", "hybrid", "--model",
                                       (dir / "model").string(), "--fusion", "auto", "--fusion-validation", "test",
                                       "--no-cache"});
  EXPECT_EQ(same.exit_code, 2) << same.output;
  EXPECT_NE(same.output.find("evaluated split"), std::string::npos) << same.output;
}

TEST(FusionCli, AutoFusionChoosesOnTheQueriesTheModelsTrainingHeldOut) {
  const auto scifact = testing::data_dir() / "beir/scifact";
  RAGMIG_REQUIRE_DATA("beir/scifact");
  testing::ScratchDir dir;
  write_file_atomic(dir / "cfg.toml", "[data]\nbeir = \"" + scifact.string() + "\"\nholdout_queries = 40\n"
                    "max_query_tokens = 16\nmax_passage_tokens = 32\n"
                    "[model]\nvocab_size = 2000\nhidden_size = 32\nlayers = 1\nheads = 2\nintermediate_size = 64\n"
                    "max_position = 64\n[train]\nmax_steps = 2\nbatch_size = 8\nwarmup_steps = 1\nthreads = 1\n"
                    "checkpoint_every = 0\n");
  const auto trained = testing::run_process({RAGMIG_BINARY, "train", (dir / "cfg.toml").string(), "--run-dir",
                                             (dir / "run").string(), "--quiet"});
  ASSERT_EQ(trained.exit_code, 0) << trained.output;

  // The model records the 40 queries its training left out: the seeded carve of the split's judged queries.
  const text::Qrels qrels = text::read_qrels(text::qrels_path(scifact.string(), "train"));
  std::vector<std::string> judged;
  std::map<std::string, int> examples_of;
  for (const auto& e : qrels.entries)
    if (e.score > 0) judged.push_back(e.query_id), ++examples_of[e.query_id];
  auto held = text::carve_queries(judged, 40);
  std::sort(held.begin(), held.end());
  const auto info = nlohmann::json::parse(read_file(dir / "run/model/ragmig.json"));
  EXPECT_EQ(info["training"]["split"], "train");
  EXPECT_EQ(info["training"]["held_out_queries"], nlohmann::json(held));
  int64_t left_out = 0;
  for (const auto& q : held) left_out += examples_of[q];
  nlohmann::json start;
  std::istringstream events(read_file(dir / "run/events.jsonl"));
  for (std::string line; std::getline(events, line) && start.is_null();)
    if (auto e = nlohmann::json::parse(line); e["event"] == "start") start = e;
  ASSERT_FALSE(start.is_null());
  EXPECT_EQ(start["examples"], static_cast<int64_t>(judged.size()) - left_out) << "no example of a held-out query trained";
  EXPECT_EQ(start["held_out_queries"], 40);

  const std::vector<std::string> args = {"--data", scifact.string(), "--retriever", "hybrid", "--model",
                                         (dir / "run/model").string(), "--fusion", "auto", "--fusion-validation-queries",
                                         "150", "--k", "100", "--candidates", "100", "--precision", "fp32",
                                         "--no-cache", "--json", "--quiet"};
  const auto favours = [](const nlohmann::json& j) {
    for (const auto& w : j["warnings"])
      if (w.get<std::string>().find("favours the model") != std::string::npos) return true;
    return false;
  };
  const auto r = testing::run_eval(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = testing::eval_json(r);
  EXPECT_EQ(j["fusion_choice"]["validation_queries"], 40) << "chosen on the held-out queries only";
  EXPECT_EQ(j["fusion_choice"]["validation_held_out_by_training"], true);
  EXPECT_FALSE(favours(j)) << r.output;

  // A model that trained on every query of the validation split: chosen on 150 of them, with a warning.
  auto all = info;
  all["training"]["held_out_queries"] = nlohmann::json::array();
  write_file_atomic(dir / "run/model/ragmig.json", all.dump());
  const auto biased = testing::run_eval(args);
  ASSERT_EQ(biased.exit_code, 0) << biased.output;
  const auto jb = testing::eval_json(biased);
  EXPECT_EQ(jb["fusion_choice"]["validation_queries"], 150);
  EXPECT_EQ(jb["fusion_choice"]["validation_held_out_by_training"], false);
  EXPECT_TRUE(favours(jb)) << biased.output;

  // Held-out ids the data does not judge: the model was trained on something else.
  all["training"]["held_out_queries"] = {"no-such-query"};
  write_file_atomic(dir / "run/model/ragmig.json", all.dump());
  const auto other = testing::run_eval(args);
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("ragmig.json: none of the 1 queries its training held out"), std::string::npos)
      << other.output;
}

}  // namespace
}  // namespace ragmig::eval
