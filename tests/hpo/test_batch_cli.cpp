// `ragmig batch` for real: a 6-trial sweep on a SQuAD subset with two CPU slots, interrupted with SIGINT
// after its first trial is done and run again to the end. Finished trials are not run again, interrupted
// ones resume from their checkpoints, ASHA stops the trials that learn nothing, every trial is in
// results.json and in the report, and the report renders in a real browser. Bad sweeps fail up front.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "core/atomic_file.h"
#include "support/headless_browser.h"
#include "support/process.h"
#include "support/squad_subset.h"
#include "support/test_support.h"
#include "text/beir.h"

namespace ragmig::testing {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json read_results(const fs::path& p) {
  const auto j = nlohmann::json::parse(read_text(p), nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

struct SweepFiles {
  fs::path sweep, state;
};

// Grid of 6: three seeds that learn (lr 5e-3) first, then three that cannot (lr 1e-7), so ASHA has
// something to stop at its one rung (step 20 of 60).
SweepFiles write_sweep(const ScratchDir& dir) {
  write_squad_subset(dir / "beir");
  write_file_atomic(dir / "base.toml", "[data]\nbeir = \"" + (dir / "beir").string() +
                                           "\"\nmax_query_tokens = 24\nmax_passage_tokens = 48\n"
                                           "[model]\nvocab_size = 2000\nhidden_size = 64\nlayers = 1\nheads = 2\n"
                                           "intermediate_size = 128\n"
                                           "[train]\nmax_steps = 60\nbatch_size = 32\nwarmup_steps = 0\nlog_every = 1\n"
                                           "checkpoint_every = 5\n[eval]\nk = 10\n");
  write_file_atomic(dir / "sweep.toml", "[sweep]\nname = \"test\"\nbase = \"base.toml\"\nsearch = \"grid\"\n"
                                            "policy = \"priority\"\n"
                                            "[space]\n\"train.lr\" = { choice = [5e-3, 1e-7] }\n"
                                            "\"train.seed\" = { choice = [1, 2, 3] }\n"
                                            "[eval]\ndata = \"" + (dir / "beir").string() + "\"\nsplit = \"test\"\n"
                                            "metric = \"ndcg@10\"\n"
                                            "[asha]\nmin_steps = 20\nreduction_factor = 3\nqueries = 100\npassages = 0\n");
  return {dir / "sweep.toml", dir / "state"};
}

int count_starts(const fs::path& events) {
  std::ifstream in(events);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find("\"event\":\"start\"") != std::string::npos;
  return n;
}

// The step of the last progress event in a worker's events.jsonl (-1 without one).
int64_t last_progress(const fs::path& events) {
  std::ifstream in(events);
  std::string line;
  int64_t step = -1;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "progress") step = j.value("step", step);
  }
  return step;
}

TEST(BatchCli, BadSweepFailsBeforeAnythingIsWritten) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  auto files = write_sweep(dir);
  // A key the training config does not have: caught while resolving the trials, nothing started.
  std::string text = read_text(files.sweep);
  text.replace(text.find("\"train.seed\""), 12, "\"train.sed\"");
  write_file_atomic(files.sweep, text);
  const auto r = run_process({RAGMIG_BINARY, "batch", files.sweep.string(), "--state", files.state.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("train.sed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sweep.toml"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(files.state)) << "a state folder was left behind";

  // Trials that need more CPU slots than the machine offers would wait forever: refused up front too.
  text.replace(text.find("\"train.sed\""), 11, "\"train.seed\"");
  text.replace(text.find("policy = "), 9, "slots = \"cpu:3\"\npolicy = ");
  write_file_atomic(files.sweep, text);
  const auto big = run_process({RAGMIG_BINARY, "batch", files.sweep.string(), "--state", files.state.string(), "--cpu-slots", "2"});
  EXPECT_EQ(big.exit_code, 2) << big.output;
  EXPECT_NE(big.output.find("[sweep] slots = \"cpu:3\": needs 3 CPU slots at once; this scheduler has 2"), std::string::npos)
      << big.output;
  EXPECT_FALSE(fs::exists(files.state)) << "a state folder was left behind";

  // Baselines and fusions that cannot run: a zero-shot of a model trained from scratch, a fusion ragmig does
  // not know, and "auto" on data without training queries to choose it on.
  text.replace(text.find("slots = \"cpu:3\"\n"), 16, "");
  const auto refused = [&](const std::string& eval_lines, const std::string& expected) {
    std::string t = text;
    const std::string metric_line = "[eval]\n";
    t.replace(t.find(metric_line), metric_line.size(), metric_line + eval_lines);
    write_file_atomic(files.sweep, t);
    const auto r = run_process({RAGMIG_BINARY, "batch", files.sweep.string(), "--state", files.state.string()});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(files.sweep.string() + ": " + expected), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(files.state)) << "a state folder was left behind";
  };
  refused("baselines = [\"zero-shot\"]\n", "[eval] baselines: \"zero-shot\" evaluates the base config's model.init");
  refused("fusion = \"Borda\"\n", "[eval] fusion: unknown fusion spec 'Borda'");
  // A metric `ragmig eval` would refuse only after the trials trained (its parser is the judge, not the sweep's).
  const std::string metric = "metric = \"ndcg@10\"";
  text.replace(text.find(metric), metric.size(), "metric = \"ndcg@010\"");
  refused("", "[eval] metric: metric 'ndcg@010': the cut-off after '@' must be a positive integer");
  text.replace(text.find("metric = \"ndcg@010\""), metric.size() + 1, metric);
  refused("dimensions = 4096\n", "[eval] dimensions = 4096: trial t00's embeddings have ");
  fs::rename(dir / "beir" / "qrels" / "train.tsv", dir / "train.tsv");
  refused("fusion = \"auto\"\n", "[eval] fusion = \"auto\" chooses the fusion on the training queries of");
  fs::rename(dir / "train.tsv", dir / "beir" / "qrels" / "train.tsv");
  // A split the evaluation data has no qrels for: every evaluation job would fail after its training.
  const std::string split = "split = \"test\"";
  text.replace(text.find(split), split.size(), "split = \"dev\"");
  refused("", "[eval] split: no qrels for split 'dev' in " + (dir / "beir").string() + "/qrels (found: ");
}

TEST(BatchCli, InterruptedSweepContinuesWithoutRerunningFinishedTrials) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  const auto files = write_sweep(dir);
  const std::vector<std::string> argv = {RAGMIG_BINARY, "batch", files.sweep.string(), "--state", files.state.string(),
                                         "--cpu-slots", "2", "--tick", "0.2"};
  const fs::path results = files.state / "results.json";

  // First run: interrupted (SIGINT, as Ctrl-C) once a trial is done and evaluated while another has begun to
  // train (under `priority` a finished trial's evaluation runs before queued trainings), well before the rung at
  // step 20: read from the workers' own events (a progress event every step).
  std::map<std::string, nlohmann::json> done_before;
  {
    BackgroundProcess batch(argv, (dir / "first.log").string());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    bool training = false;
    while (batch.running() && std::chrono::steady_clock::now() < deadline && (done_before.empty() || !training)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const auto j = read_results(results);
      if (!j.contains("trials")) continue;
      done_before.clear();
      training = false;
      for (const auto& t : j["trials"]) {
        if (t["state"] == "done") done_before[t["id"].get<std::string>()] = t;
        const int64_t step = last_progress(files.state / "runs" / std::to_string(t["train_job"].get<int64_t>()) / "events.jsonl");
        training = training || (t["state"] == "running" && step >= 1 && step <= 8);
      }
    }
    ASSERT_TRUE(!done_before.empty() && training)
        << "never a trial done while another trained: " << read_text(dir / "first.log");
    batch.signal(SIGINT);
    EXPECT_EQ(batch.wait(), 75) << read_text(dir / "first.log");
  }
  const auto interrupted = read_results(results);
  ASSERT_TRUE(interrupted.contains("trials"));
  size_t unfinished = 0;
  for (const auto& t : interrupted["trials"]) unfinished += t["state"] != "done" && t["state"] != "stopped";
  EXPECT_GT(unfinished, 0u) << "the interrupt came after the sweep had finished: " << interrupted.dump(1);
  // The trials the stop caught training before their rung, checkpointed there. (One that the stop reached at its
  // rung or past it has its rung's value, and ASHA may stop it instead: nothing to resume.)
  std::set<std::string> caught;
  for (const auto& t : interrupted["trials"]) {
    const int64_t steps = t["steps"].get<int64_t>();
    if (t["state"] == "queued" && steps >= 1 && steps < 20) caught.insert(t["id"]);
  }
  ASSERT_FALSE(caught.empty()) << "the stop reached no trial before its rung: " << interrupted.dump(1)
                               << read_text(dir / "first.log");
  // A trial that was done then is still done, with the same metric.
  for (const auto& [id, t] : done_before) {
    bool found = false;
    for (const auto& u : interrupted["trials"])
      if (u["id"] == id) {
        found = true;
        EXPECT_EQ(u["metric"], t["metric"]) << id;
      }
    EXPECT_TRUE(found) << id;
  }

  // Second run: to the end.
  const auto second = run_process(argv);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const auto final_results = read_results(results);
  ASSERT_EQ(final_results["trials"].size(), 6u) << final_results.dump(1);
  int stopped = 0;
  for (const auto& t : final_results["trials"]) {
    const std::string id = t["id"], state = t["state"];
    ASSERT_TRUE(state == "done" || state == "stopped") << t.dump();
    const fs::path run = files.state / "runs" / std::to_string(t["train_job"].get<int64_t>());
    if (state == "done") {
      EXPECT_TRUE(t["metric"].is_number()) << t.dump();
      EXPECT_EQ(t["steps"], 60) << t.dump();
      EXPECT_TRUE(fs::exists(run / "model")) << id;
    } else {
      ++stopped;
      // In trial order a stop can be decided after the trial trained to its end (its rung waited for earlier
      // trials): then it is stopped all the same, and never evaluated.
      EXPECT_LE(t["steps"].get<int64_t>(), 60) << t.dump();
      EXPECT_EQ(t["eval_job"], 0) << t.dump();
      EXPECT_TRUE(t["metric"].is_null()) << t.dump();
      ASSERT_FALSE(t["rungs"].empty()) << t.dump();
      EXPECT_EQ(t["rungs"].back()["action"], "stop") << t.dump();
    }
    if (done_before.count(id)) {
      // Not run again: the same jobs, one training start, the same metric.
      EXPECT_EQ(t["train_job"], done_before[id]["train_job"]) << id;
      EXPECT_EQ(t["eval_job"], done_before[id]["eval_job"]) << id;
      EXPECT_EQ(t["metric"], done_before[id]["metric"]) << id;
      EXPECT_EQ(count_starts(run / "events.jsonl"), 1) << id;
    } else if (caught.count(id)) {
      // Checkpointed at the interrupt, resumed by the second run.
      EXPECT_EQ(count_starts(run / "events.jsonl"), 2) << id;
      EXPECT_NE(read_text(run / "events.jsonl").find("\"resumed_from\":\""), std::string::npos) << id;
    }
  }
  EXPECT_GE(stopped, 1) << "ASHA stopped no trial: " << final_results.dump(1);
  // Trials that learn rank above those that do not: the best trial is one with lr 5e-3.
  double best = -1;
  std::string best_lr;
  for (const auto& t : final_results["trials"])
    if (t["metric"].is_number() && t["metric"].get<double>() > best)
      best = t["metric"].get<double>(), best_lr = t["params"]["train.lr"].dump();
  EXPECT_EQ(best_lr, "0.005");

  const std::string html = read_text(files.state / "report.html");
  for (const auto& t : final_results["trials"])
    EXPECT_NE(html.find(">" + t["id"].get<std::string>() + "<"), std::string::npos) << t["id"];
  EXPECT_EQ(html.find("<script"), std::string::npos);

  // A third run finds nothing to do and changes nothing: the report it writes again still ends where the sweep did.
  const auto wall_time = [](const std::string& page) {
    const std::string card = ">wall time</div><div class=\"v\">";
    const size_t at = page.find(card);
    if (at == std::string::npos) return std::string();
    const size_t begin = at + card.size();
    return page.substr(begin, page.find('<', begin) - begin);
  };
  const std::string wall = wall_time(html);
  ASSERT_FALSE(wall.empty()) << html;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto third = run_process(argv);
  EXPECT_EQ(third.exit_code, 0) << third.output;
  EXPECT_EQ(read_results(results)["trials"], final_results["trials"]);
  EXPECT_EQ(wall_time(read_text(files.state / "report.html")), wall);

  // The report renders in a real browser (skipped without Chromium).
  if (find_chromium().empty()) GTEST_SKIP() << "chromium not found: the report was not opened in a browser";
  const auto shot = (dir / "report.png").string();
  const BrowserCheck check = check_in_browser((files.state / "report.html").string(), shot);
  ASSERT_TRUE(check.ran) << check.log;
  EXPECT_GT(check.svg_count, 0);
  EXPECT_EQ(check.svg_rendered, check.svg_count) << check.log;
  EXPECT_TRUE(check.console_errors.empty()) << check.console_errors.front();
  EXPECT_EQ(check.wrapped_figures, 0);
  EXPECT_EQ(check.wide_tables, 0);
  EXPECT_EQ(check.page_overflow_px, 0);
  EXPECT_TRUE(fs::exists(shot));
}

// [asha] order = "trial" (the default): the same sweep gives the same rung decisions, states, metrics and
// leaderboard whatever the machine's timing. Four trials train at once on four CPU slots (one thread each),
// once on an idle machine and once beside a busy loop per core, so they reach the rung in different orders;
// everything in results.json but where and how long each trial ran (steps of a stopped trial, wall_s, slot,
// job ids, the rate they trained at and their estimates at it) is the same.
TEST(BatchCli, TheSameSweepGivesTheSameDecisionsUnderAnyLoad) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  const auto files = write_sweep(dir);
  std::string text = read_text(files.sweep);
  text.replace(text.find("[1, 2, 3]"), 9, "[1, 2]");
  write_file_atomic(files.sweep, text);
  const auto outcome = [&](const std::string& tag, bool busy) {
    std::vector<std::unique_ptr<BackgroundProcess>> loops;
    for (unsigned i = 0; busy && i < std::max(1u, std::thread::hardware_concurrency()); ++i)
      loops.push_back(std::make_unique<BackgroundProcess>(std::vector<std::string>{"/bin/sh", "-c", "while :; do :; done"},
                                                          (dir / "busy.log").string()));
    const auto r = run_process({RAGMIG_BINARY, "batch", files.sweep.string(), "--state", (dir / tag).string(),
                                "--cpu-slots", "4", "--tick", "0.1"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    nlohmann::json out = read_results(dir / tag / "results.json");
    // A stopped trial's reason is in the log twice: when the scheduler stops its job, and as the trial's end
    // ("t01: stopped by ASHA at step ..."); the job's end says how it exited.
    for (const auto& t : out["trials"]) {
      if (t["state"] != "stopped") continue;
      const std::string reason = t.value("reason", "");
      size_t times = 0;
      for (size_t at = r.output.find(reason); !reason.empty() && at != std::string::npos;
           at = r.output.find(reason, at + 1))
        ++times;
      EXPECT_EQ(times, 2u) << reason << "\n" << r.output;
      EXPECT_NE(r.output.find(t["id"].get<std::string>() + ": " + reason), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("running -> cancelled (exit code 75)"), std::string::npos) << r.output;
    }
    for (auto& t : out["trials"])
      for (const char* key : {"steps", "wall_s", "slot", "train_job", "eval_job", "estimate_s"}) t.erase(key);
    EXPECT_GT(out.value("flops_per_s", 0.0), 0) << "no training rate was measured";
    out.erase("flops_per_s");  // how fast the trials trained: the machine's load
    return out;
  };
  const nlohmann::json idle = outcome("idle", false), loaded = outcome("loaded", true);
  ASSERT_EQ(idle["trials"].size(), 4u) << idle.dump(1);
  EXPECT_EQ(idle, loaded) << "idle:\n" << idle.dump(1) << "\nloaded:\n" << loaded.dump(1);
  int stopped = 0;
  for (const auto& t : idle["trials"]) stopped += t["state"] == "stopped";
  EXPECT_GE(stopped, 1) << idle.dump(1);
}

// Each trial is priced by its FLOPs (train/work_estimate.h): under ljf on one CPU slot the largest batch trains
// first and the smallest last, where fifo would take them in trial order. Once trials have trained a while the
// sweep measures its rate from their progress events; it is of the order their own throughput gives (FLOP/s of
// this machine, not the unmeasured guess that prices the median trial at an hour), so the estimates the
// scheduler ranks by are seconds.
TEST(BatchCli, UnderLjfTheLargestTrialTrainsFirstPricedAtTheMeasuredRate) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_subset(dir / "beir");
  write_file_atomic(dir / "base.toml", "[data]\nbeir = \"" + (dir / "beir").string() +
                                           "\"\nmax_query_tokens = 24\nmax_passage_tokens = 48\n"
                                           "[model]\nvocab_size = 2000\nhidden_size = 64\nlayers = 1\nheads = 2\n"
                                           "intermediate_size = 128\n"
                                           "[train]\nmax_steps = 20\nwarmup_steps = 0\nlog_every = 1\n"
                                           "[eval]\nk = 10\n");
  write_file_atomic(dir / "sweep.toml", "[sweep]\nname = \"sizes\"\nbase = \"base.toml\"\nsearch = \"grid\"\n"
                                            "policy = \"ljf\"\n"
                                            "[asha]\nqueries = 10\npassages = 40\n"
                                            "[space]\n\"train.batch_size\" = { choice = [8, 32, 16] }\n"
                                            "[eval]\ndata = \"" + (dir / "beir").string() + "\"\nsplit = \"test\"\n"
                                            "metric = \"ndcg@10\"\nmax_queries = 50\n");
  const fs::path state = dir / "state";
  const auto r = run_process({RAGMIG_BINARY, "batch", (dir / "sweep.toml").string(), "--state", state.string(),
                              "--cpu-slots", "1", "--tick", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json out = read_results(state / "results.json");
  ASSERT_EQ(out["trials"].size(), 3u) << out.dump(1);
  std::map<std::string, double> flops, started;
  for (const auto& t : out["trials"]) {
    EXPECT_EQ(t["state"], "done") << t.dump();
    const std::string id = t["id"];
    flops[id] = t.value("flops", 0.0);
    const fs::path events = state / "runs" / std::to_string(t["train_job"].get<int64_t>()) / "events.jsonl";
    std::ifstream in(events);
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("event", "") == "start" && !started.count(id)) started[id] = j.value("time", 0.0);
    }
  }
  EXPECT_GT(flops["t01"], flops["t02"]);  // batch 32, 16, 8
  EXPECT_GT(flops["t02"], flops["t00"]);
  ASSERT_EQ(started.size(), 3u);
  EXPECT_LT(started["t01"], started["t02"]) << "ljf starts the largest trial first";
  EXPECT_LT(started["t02"], started["t00"]) << "and the smallest last";

  // The measured rate against the throughput t01's trainer reported: the same order of magnitude. (The rate is
  // measured on training steps; the rung evaluations here are small, so a trial's FLOPs over its steps are
  // about one step's. Within 10x: the two clocks see a 20-step trial's windows differently, and a busy machine
  // widens that; 4.04x once at -j2 beside another test.)
  ASSERT_TRUE(out["flops_per_s"].is_number()) << out.dump(1);
  const double rate = out["flops_per_s"].get<double>();
  std::vector<double> samples_per_s;
  std::ifstream in(state / "runs" / std::to_string(out["trials"][1]["train_job"].get<int64_t>()) / "events.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "progress") samples_per_s.push_back(j.value("samples_per_s", 0.0));
  }
  ASSERT_FALSE(samples_per_s.empty());
  std::sort(samples_per_s.begin(), samples_per_s.end());
  const double reported = flops["t01"] / 20 / 32 * samples_per_s[samples_per_s.size() / 2];
  EXPECT_GT(rate, reported / 10) << "measured " << rate << " FLOP/s; t01's trainer reported " << reported;
  EXPECT_LT(rate, reported * 10) << "measured " << rate << " FLOP/s; t01's trainer reported " << reported;
  // Each trial's estimate is its FLOPs at that rate, and the report's leaderboard shows both.
  for (const auto& t : out["trials"]) {
    const double estimate = t.value("estimate_s", 0.0);
    EXPECT_NEAR(estimate, t.value("flops", 0.0) / rate, 1e-9 * estimate) << t.dump();
  }
  const std::string report = read_text(state / "report.html");
  EXPECT_NE(report.find("<th class=\"num\">work (estimate)</th>"), std::string::npos);
  // `ragmig status --json` shows the estimate each training was last ranked by, in seconds: the measured rate's
  // (repriced past 10 %), not the unmeasured hour.
  const auto status = run_process({RAGMIG_BINARY, "status", "--state", state.string(), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.output;
  const nlohmann::json listed = nlohmann::json::parse(status.output);
  size_t priced = 0;
  for (const auto& job : listed["jobs"])
    if (job["argv"].size() > 1 && job["argv"][1] == "train") {
      ++priced;
      EXPECT_GT(job.value("estimate_s", 0.0), 0) << job.dump();
      EXPECT_LT(job.value("estimate_s", 1e9), 600) << job.dump();
    }
  EXPECT_EQ(priced, 3u) << status.output;
  EXPECT_NE(report.find("FLOP ("), std::string::npos);
}

// A sweep that starts from a trained model scores BM25 and that model untrained beside its trials, each alone
// and fused with BM25; the scores are those `ragmig eval` gives for the same retrievers run by hand.
TEST(BatchCli, BaselinesAndFusedScoresStandBesideTheTrials) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  const auto files = write_sweep(dir);
  // The model to start from: the tiny encoder after 20 steps, standing in for a pretrained one.
  const auto init = run_process({RAGMIG_BINARY, "train", (dir / "base.toml").string(), "--run-dir", (dir / "init").string(),
                                 "--quiet", "--set", "train.max_steps=20", "--set", "train.lr=5e-3"});
  ASSERT_EQ(init.exit_code, 0) << init.output;
  const std::string model = (dir / "init" / "model").string();
  std::string text = read_text(files.sweep);
  const auto edit = [&](const std::string& from, const std::string& to) {
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
  };
  edit("base = \"base.toml\"", "base = \"base.toml\"\nset = [\"model.init=" + model + "\"]");
  edit("{ choice = [5e-3, 1e-7] }", "{ choice = [1e-3] }");
  edit("[1, 2, 3]", "[1, 2]");
  edit("metric = \"ndcg@10\"\n",
       "metric = \"ndcg@10\"\nfusion = \"auto\"\nbaselines = [\"bm25\", \"zero-shot\"]\ndimensions = 16\n");
  text = text.substr(0, text.find("[asha]"));
  write_file_atomic(files.sweep, text);
  const auto r = run_process({RAGMIG_BINARY, "batch", files.sweep.string(), "--state", files.state.string(),
                              "--cpu-slots", "2", "--tick", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("zero-shot: done (ndcg@10 "), std::string::npos) << r.output;
  const nlohmann::json results = read_results(files.state / "results.json");
  ASSERT_EQ(results["baselines"].size(), 2u) << results.dump(1);
  const auto& bm25 = results["baselines"][0];
  const auto& zero = results["baselines"][1];
  EXPECT_EQ(bm25["id"], "bm25");
  EXPECT_EQ(bm25["state"], "done");
  EXPECT_FALSE(bm25.contains("hybrid"));  // BM25 fused with itself says nothing
  EXPECT_EQ(zero["id"], "zero-shot");
  EXPECT_EQ(zero["state"], "done");
  ASSERT_TRUE(zero["metric"].is_number() && zero["hybrid"].is_number()) << zero.dump();

  // The same retrievers by hand: BM25 to the last digit, the untrained model alone as `ragmig eval` scores it.
  const auto by_hand = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {RAGMIG_BINARY, "eval", "--data", (dir / "beir").string(), "--split", "test",
                                     "--metrics", "ndcg@10", "--max-query-tokens", "24", "--max-passage-tokens", "48",
                                     "--threads", "1", "--no-cache", "--json", "--quiet"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto e = run_process(argv);
    EXPECT_EQ(e.exit_code, 0) << e.output;
    const auto j = output_json(e);
    return j.is_object() && j.contains("ndcg@10") ? j["ndcg@10"].get<double>() : -1.0;
  };
  EXPECT_EQ(bm25["metric"].get<double>(), by_hand({"--retriever", "bm25"}));
  EXPECT_NEAR(zero["metric"].get<double>(), by_hand({"--retriever", "dense", "--model", model, "--dimensions", "16"}),
              1e-4);
  const nlohmann::json zero_eval = nlohmann::json::parse(read_text(files.state / "evals" / "zero-shot.json"));
  EXPECT_EQ(zero_eval["parts"]["bm25"]["ndcg@10"], bm25["metric"]);
  EXPECT_EQ(zero_eval["fusion_choice"]["validation_split"], "train");  // chosen on training queries, not the test split

  ASSERT_EQ(results["trials"].size(), 2u);
  for (const auto& t : results["trials"]) {
    ASSERT_EQ(t["state"], "done") << t.dump();
    ASSERT_TRUE(t["metric"].is_number() && t["hybrid"].is_number() && t["fusion"].is_string()) << t.dump();
    const nlohmann::json e = nlohmann::json::parse(read_text(files.state / "evals" / (t["id"].get<std::string>() + ".json")));
    EXPECT_EQ(t["metric"], e["parts"]["dense"]["ndcg@10"]);  // the trial's model alone
    EXPECT_EQ(t["hybrid"], e["ndcg@10"]);
    EXPECT_EQ(t["fusion"], e["fusion"]);
    EXPECT_EQ(e["dimensions"], 16) << "[eval] dimensions";
  }
  const std::string report = read_text(files.state / "report.html");
  // The best-score card names a trial (the model to keep) even where a baseline scores higher.
  const std::string card = "<div class=\"k\">best ndcg@10</div><div class=\"v\">";
  ASSERT_NE(report.find(card), std::string::npos);
  const size_t at = report.find(card);
  const std::string best = report.substr(at, report.find("</div></div>\n", at) - at);  // key, score, trial
  EXPECT_NE(best.find("<div class=\"d\" title=\"t0"), std::string::npos) << best;
  for (const char* shown : {">zero-shot", ">bm25", "baseline</span>", "fused with BM25</th>", "best hybrid with BM25",
                            "bm25 eval", "zero-shot eval"})
    EXPECT_NE(report.find(shown), std::string::npos) << shown;
}

TEST(BatchCli, AStateFolderRefusesAnotherSweep) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  const auto files = write_sweep(dir);
  // The folder is pinned to another sweep (as its first run leaves it).
  fs::create_directories(files.state);
  write_file_atomic(files.state / "sweep.json", "{\"spec\": {\"name\": \"other\"}}\n");
  const auto r = run_process({RAGMIG_BINARY, "batch", files.sweep.string(), "--state", files.state.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("different sweep"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(files.state / "results.json"));
}


// asha.jsonl, the decisions a later driver replays: a line of the wrong shape or types is refused with the
// file and line (it used to escape as a JSON library exception), and the folder is left as it was.
TEST(BatchCli, AMalformedDecisionLogIsNamedByFileAndLine) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  const auto files = write_sweep(dir);
  const std::vector<std::string> argv = {RAGMIG_BINARY, "batch", files.sweep.string(), "--state", files.state.string(),
                                         "--cpu-slots", "1", "--tick", "0.2"};
  {  // a first driver pins the sweep, then is interrupted
    BackgroundProcess batch(argv, (dir / "first.log").string());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (batch.running() && !fs::exists(files.state / "sweep.json") && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    batch.signal(SIGINT);
    batch.wait();
  }
  ASSERT_TRUE(fs::exists(files.state / "sweep.json")) << read_text(dir / "first.log");
  const std::string trial = "t00";  // hpo::trial_id(0)
  const std::string good = nlohmann::json{{"trial", trial}, {"step", 20}, {"value", 0.1}, {"action", "continue"}}.dump();
  for (const std::string& bad : {nlohmann::json{{"trial", trial}, {"step", "20"}, {"value", 0.1}, {"action", "continue"}}.dump(),
                                nlohmann::json{{"trial", 3}, {"step", 20}, {"value", 0.1}, {"action", "continue"}}.dump(),
                                nlohmann::json{{"trial", trial}, {"step", 20}, {"value", "high"}, {"action", "continue"}}.dump(),
                                std::string("[1, 2]")}) {
    const std::string log = good + "\n" + bad + "\n" + good + "\n";
    write_file_atomic(files.state / "asha.jsonl", log);
    const auto r = run_process(argv);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("asha.jsonl:2"), std::string::npos) << bad << "\n" << r.output;
    EXPECT_EQ(read_text(files.state / "asha.jsonl"), log);
  }
}

// --mig auto on a machine without NVML: refused before the sweep's folder exists. The sweep is the MIG
// example of examples/, run from the repository as its comment says: reaching the NVML check means that
// the file, its base config, its `set` and every trial resolved.
TEST(BatchCli, MigAutoWithoutNvmlFailsBeforeAnythingIsWritten) {
  if (!fs::is_directory(fs::path(RAGMIG_SOURCE_DIR) / "../shared/data/beir/squad-train")) {
    if (std::getenv("RAGMIG_REQUIRE_DATA_FILES"))
      FAIL() << "../shared/data/beir/squad-train is not beside this checkout";
    GTEST_SKIP() << "the example's data, ../shared/data/beir/squad-train, is not beside this checkout";
  }
  ScratchDir dir;
  const fs::path state = dir / "state";
  const std::string command = "cd " + std::string(RAGMIG_SOURCE_DIR) +
                              " && RAGMIG_NVML_LIBRARY=/no/such/libnvidia-ml.so.1 exec " + RAGMIG_BINARY +
                              " batch examples/sweep-squad-mig.toml --mig auto --state " + state.string();
  const auto r = run_process({"/bin/sh", "-c", command});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--mig auto needs NVML"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(state)) << "a state folder was left behind";
}

// A sweep on an H200 whose MIG mode is on but which has no instance yet (the emulated NVML driver of
// tests/gpu): with --mig auto the scheduler creates 1g.18gb instances for the trials and their evaluations,
// every job runs pinned to one (CUDA_VISIBLE_DEVICES = its MIG UUID; the work itself runs on the CPU here),
// and the report names the GPU.
TEST(BatchCli, ASweepOnAnEmptyMigGpuPartitionsItForTheTrials) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  const auto files = write_sweep(dir);
  std::string text = read_text(files.sweep);
  text.replace(text.find("\"train.lr\" = { choice = [5e-3, 1e-7] }"), 38, "\"train.lr\" = { choice = [5e-3] }");
  text.replace(text.find("policy = "), 9, "slots = \"1g.18gb:1\"\npolicy = ");
  text.replace(text.find("min_steps = 20"), 14, "min_steps = 0");
  write_file_atomic(files.sweep, text);
  std::string base = read_text(dir / "base.toml");
  base.replace(base.find("max_steps = 60"), 14, "max_steps = 10\nthreads = 1");
  write_file_atomic(dir / "base.toml", base);
  const fs::path gpus = dir / "nvml.json";
  write_file_atomic(gpus, nlohmann::json{{"gpus", {{{"name", "NVIDIA H200"},
                                                    {"uuid", "GPU-5e1d7c52-0000-4000-8000-000000000000"},
                                                    {"memory_mib", 143771},
                                                    {"mig_current", 1},
                                                    {"instances", nlohmann::json::array()}}}}}
                              .dump());
  ::setenv("RAGMIG_NVML_LIBRARY", NVML_EMULATOR, 1);
  ::setenv("NVML_EMULATOR_STATE", gpus.c_str(), 1);
  ::unsetenv("CUDA_VISIBLE_DEVICES");  // it would hide the emulator's GPU
  const auto r = run_process({RAGMIG_BINARY, "batch", files.sweep.string(), "--state", files.state.string(), "--mig", "auto"});
  ::unsetenv("RAGMIG_NVML_LIBRARY");
  ::unsetenv("NVML_EMULATOR_STATE");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ragmig batch: mig auto: GPU 0 (H200-141GB): nvidia-smi mig -i 0 -cgi "), std::string::npos)
      << r.output;

  const auto results = read_results(files.state / "results.json");
  ASSERT_EQ(results["trials"].size(), 3u) << results.dump(2);
  for (const auto& t : results["trials"]) {
    EXPECT_EQ(t["state"], "done") << t.dump();
    EXPECT_TRUE(t["metric"].is_number()) << t.dump();
  }
  // Every job ran on an instance the scheduler created (at least the 1g.18gb each asks for; trials get more,
  // which runs them faster), and was told its MIG UUID. Trials of equal size (priced at an hour each until they
  // have measured their rate, then at what they measured) run one after the other on the whole GPU: the second
  // would rather wait for the first than share at the 1.2x a 4g + 3g is assumed to do, and without moves none is
  // packed where waiting for the GPU to free would end it sooner (exec/mig_rebalance.h). Packing on a real run:
  // tests/gpu/test_mig_auto_run.cpp.
  size_t created = 0;
  for (size_t at = r.output.find("-cgi "); at != std::string::npos; at = r.output.find("-cgi ", at + 1)) ++created;
  EXPECT_GE(created, 1u) << r.output;
  const auto state = nlohmann::json::parse(read_text(gpus));
  std::set<std::string> uuids;
  for (const auto& gi : state["gpus"][0]["instances"])
    for (const auto& ci : gi["cis"]) uuids.insert(ci["uuid"].get<std::string>());
  EXPECT_GE(uuids.size(), 1u) << r.output;
  const auto status = run_process({RAGMIG_BINARY, "status", "--state", files.state.string(), "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.output;
  const auto jobs = nlohmann::json::parse(status.output)["jobs"];
  EXPECT_EQ(jobs.size(), 6u);  // three trainings, three evaluations
  size_t pinned_starts = 0;
  for (const auto& j : jobs) {
    const auto one = run_process({RAGMIG_BINARY, "status", std::to_string(j["id"].get<int64_t>()), "--state",
                                  files.state.string(), "--json"});
    const auto detail = nlohmann::json::parse(one.output);
    const auto attempts = detail["attempt_list"];  // not a member of a temporary
    for (const auto& a : attempts) {
      ASSERT_EQ(a["slots"].size(), 1u);
      EXPECT_EQ(a["slots"][0].get<std::string>().rfind("mig:0:", 0), 0u) << a.dump();
    }
    // A job's start events (a training's, an evaluation's) say what it was pinned to: a MIG instance (the
    // emulator's UUIDs of instances since destroyed are not in its final state, so the form is checked, not the list).
    const fs::path events = fs::path(detail["run_dir"].get<std::string>()) / "events.jsonl";
    if (!fs::exists(events)) continue;
    std::istringstream lines(read_text(events));
    for (std::string line; std::getline(lines, line);) {
      const auto e = nlohmann::json::parse(line);
      if (e["event"] != "start") continue;
      ++pinned_starts;
      ASSERT_TRUE(e["visible_devices"].is_string()) << e.dump();
      EXPECT_TRUE(e["visible_devices"].get<std::string>().starts_with("MIG-e0"))
          << e["visible_devices"] << " of " << events;
    }
  }
  EXPECT_GE(pinned_starts, 6u) << "each of the three trainings and three evaluations started pinned";
  EXPECT_NE(read_text(files.state / "report.html").find("NVIDIA H200"), std::string::npos);
}

}  // namespace
}  // namespace ragmig::testing
