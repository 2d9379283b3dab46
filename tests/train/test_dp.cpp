// Data-parallel training end to end with the real binary and real processes (`ragmig train --replicas N`,
// Gloo over loopback): sync equals one process with the combined batch, localsgd with K=1 and SGD equals
// sync, dynamic batching closes a step-time gap, and stops, deaths and resumes with another replica count.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>

#include "core/atomic_file.h"
#include "train_fixture.h"

namespace ragmig::testing {
namespace {

std::vector<nlohmann::json> read_events(const std::filesystem::path& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(j);
  }
  return out;
}

std::vector<nlohmann::json> events_named(const std::filesystem::path& path, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (auto& e : read_events(path))
    if (e["event"] == name) out.push_back(e);
  return out;
}

// step -> loss of the progress events (log_every = 1: one per step).
std::map<int64_t, double> loss_curve(const std::filesystem::path& run) {
  std::map<int64_t, double> curve;
  for (const auto& e : events_named(run / "events.jsonl", "progress")) curve[e["step"]] = e["loss"].get<double>();
  return curve;
}

double max_abs_diff(const std::map<int64_t, double>& a, const std::map<int64_t, double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (const auto& [step, loss] : a) {
    EXPECT_TRUE(b.count(step)) << "step " << step << " missing";
    if (b.count(step)) worst = std::max(worst, std::abs(loss - b.at(step)));
  }
  return worst;
}

int64_t last_step(const std::filesystem::path& events) {
  int64_t step = -1;
  for (const auto& e : read_events(events)) {
    if (e["event"] == "start") step = std::max<int64_t>(step, 0);
    if (e["event"] == "progress") step = std::max(step, e["step"].get<int64_t>());
  }
  return step;
}

class DataParallel : public ::testing::Test {
 protected:
  void SetUp() override {
    RAGMIG_REQUIRE_DATA("beir/squad-train");
    write_squad_pairs(dir_ / "pairs.jsonl", 240);
    write_file_atomic(dir_ / "cfg.toml", tiny_config(dir_ / "pairs.jsonl"));
  }
  std::vector<std::string> train_args(const std::string& run, const std::vector<std::string>& sets, int replicas) {
    std::vector<std::string> args = {"train", (dir_ / "cfg.toml").string(), "--run-dir", (dir_ / run).string(),
                                     "--quiet"};
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    if (replicas > 1) args.insert(args.end(), {"--replicas", std::to_string(replicas)});
    return args;
  }
  ProcessResult train(const std::string& run, const std::vector<std::string>& sets, int replicas) {
    return run_ragmig(train_args(run, sets, replicas));
  }
  // Starts a run in the background and sends SIGTERM once it has reached `stop_at`; returns its exit code.
  int train_and_stop(const std::string& run, const std::vector<std::string>& sets, int replicas, int64_t stop_at) {
    auto args = train_args(run, sets, replicas);
    args.insert(args.begin(), RAGMIG_BINARY);
    std::filesystem::create_directories(dir_ / run);
    BackgroundProcess proc(args, (dir_ / (run + ".log")).string());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (proc.running() && last_step(dir_ / run / "events.jsonl") < stop_at &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    proc.signal(SIGTERM);
    return proc.wait();
  }
  // A tiny model trained 3 steps without dropout (so replicas draw no masks), and the --set keys of a rank-4
  // LoRA run on it without adapter dropout.
  std::vector<std::string> lora_on_a_trained_base() {
    auto base = train("base", {"model.dropout=0", "train.max_steps=3"}, 1);
    EXPECT_EQ(base.exit_code, 0) << base.output;
    return {"model.init=" + (dir_ / "base" / "model").string(), "lora.rank=4", "lora.dropout=0"};
  }
  ScratchDir dir_;
};

// Dropout off: with it, each replica draws its own masks and the runs differ by design. fp32: `auto` is bf16
// on CPUs where bf16 is the faster, whose rounding differs between one batch and two halves summed.
const std::vector<std::string> kExact = {"model.dropout=0", "train.max_steps=50", "train.precision=fp32"};

TEST_F(DataParallel, SyncTwoReplicasGiveTheLossCurveOfOneProcessWithTheCombinedBatch) {
  auto one = train("one", kExact, 1);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  auto two = train("two", kExact, 2);
  ASSERT_EQ(two.exit_code, 0) << two.output << read_file(dir_ / "two/worker.rank1.log");
  const auto a = loss_curve(dir_ / "one"), b = loss_curve(dir_ / "two");
  ASSERT_EQ(a.size(), 50u);
  const double diff = max_abs_diff(a, b);
  std::printf("sync 2 replicas vs 1 process, 50 steps: max |loss diff| = %.3g (loss %.4f -> %.4f)\n", diff,
              a.begin()->second, a.rbegin()->second);
  EXPECT_LT(diff, 1e-4);
  EXPECT_GT(a.begin()->second - a.rbegin()->second, 0.1) << "the model did not learn: the check would be vacuous";
  const auto start = events_named(dir_ / "two/events.jsonl", "start").at(0);
  EXPECT_EQ(start["parallel"]["replicas"], 2);
  EXPECT_EQ(start["parallel"]["backend"], "gloo");
  const std::string reason = start["parallel"]["backend_reason"];
  EXPECT_TRUE(reason == "this LibTorch has no NCCL" || reason == "the model is on the CPU") << reason;
  const auto last = events_named(dir_ / "two/events.jsonl", "progress").back();
  EXPECT_EQ(last["replica_batches"], nlohmann::json({8, 8}));
  EXPECT_EQ(last["samples"], 50 * 16);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "two/model/model.safetensors"));
}

TEST_F(DataParallel, GradCacheSyncMatchesToo) {
  // fp32 as kExact: under bf16 the rounding depends on the CPU and its thread count (1.3e-4 on a 16-core host).
  const std::vector<std::string> sets = {"model.dropout=0", "train.max_steps=20", "train.accumulation=gradcache",
                                         "train.chunk_size=3", "train.precision=fp32"};
  auto one = train("one", sets, 1);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  auto two = train("two", sets, 2);
  ASSERT_EQ(two.exit_code, 0) << two.output << read_file(dir_ / "two/worker.rank1.log");
  const double diff = max_abs_diff(loss_curve(dir_ / "one"), loss_curve(dir_ / "two"));
  std::printf("gradcache sync 2 replicas vs 1 process, 20 steps: max |loss diff| = %.3g\n", diff);
  EXPECT_LT(diff, 1e-4);
}

// The Matryoshka loss over the gathered global batch: two replicas still follow one process.
TEST_F(DataParallel, MatryoshkaSyncMatchesToo) {
  std::vector<std::string> sets = kExact;
  sets.push_back("train.max_steps=20");
  sets.push_back("train.matryoshka_dims=[32, 8, 4]");
  auto one = train("one", sets, 1);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  auto two = train("two", sets, 2);
  ASSERT_EQ(two.exit_code, 0) << two.output << read_file(dir_ / "two/worker.rank1.log");
  const auto a = loss_curve(dir_ / "one");
  const double diff = max_abs_diff(a, loss_curve(dir_ / "two"));
  std::printf("matryoshka sync 2 replicas vs 1 process, 20 steps: max |loss diff| = %.3g (first loss %.4f)\n", diff,
              a.begin()->second);
  EXPECT_LT(diff, 1e-4);
  // An untrained model's InfoNCE over 16 pairs is near log(16); three sizes' sum near three times that.
  EXPECT_GT(a.begin()->second, 1.5 * std::log(16.0)) << "the loss sums the three sizes";
}

// A Resize (control.json) reaches every replica through rank 0 and the per-step exchange: both apply it at the
// same step, and two replicas still follow one process resized at that step.
TEST_F(DataParallel, AResizeAppliesOnEveryReplicaAtTheSameStep) {
  const std::vector<std::string> sets = {"model.dropout=0", "train.max_steps=20", "train.precision=fp32"};
  for (const char* run : {"one", "two"}) {
    std::filesystem::create_directories(dir_ / run);
    write_file_atomic(dir_ / run / "control.json", R"({"batch_size": 10, "after_step": 8})");
  }
  auto one = train("one", sets, 1);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  auto two = train("two", sets, 2);
  ASSERT_EQ(two.exit_code, 0) << two.output << read_file(dir_ / "two/worker.rank1.log");
  const double diff = max_abs_diff(loss_curve(dir_ / "one"), loss_curve(dir_ / "two"));
  std::printf("resized at step 8 (16 -> 10), 2 replicas vs 1 process, 20 steps: max |loss diff| = %.3g\n", diff);
  EXPECT_LT(diff, 1e-4);
  for (const char* run : {"one", "two"}) {
    const auto resizes = events_named(dir_ / run / "events.jsonl", "resize");
    ASSERT_EQ(resizes.size(), 1u) << run;
    EXPECT_EQ(resizes[0]["step"], 8);
    EXPECT_EQ(resizes[0]["batch_size"], 10);
  }
  for (const auto& e : events_named(dir_ / "two/events.jsonl", "progress"))
    EXPECT_EQ(e["replica_batches"], e["step"] <= 8 ? nlohmann::json({8, 8}) : nlohmann::json({5, 5})) << e["step"];
}

// LoRA on a pretrained start (a tiny model trained first, without dropout): only the adapters are all-reduced,
// and two replicas still follow the one-process loss curve.
TEST_F(DataParallel, LoraSyncMatchesToo) {
  auto sets = lora_on_a_trained_base();
  sets.insert(sets.end(), {"train.max_steps=20", "train.precision=fp32"});
  auto one = train("one", sets, 1);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  auto two = train("two", sets, 2);
  ASSERT_EQ(two.exit_code, 0) << two.output << read_file(dir_ / "two/worker.rank1.log");
  const double diff = max_abs_diff(loss_curve(dir_ / "one"), loss_curve(dir_ / "two"));
  std::printf("LoRA sync 2 replicas vs 1 process, 20 steps: max |loss diff| = %.3g\n", diff);
  EXPECT_LT(diff, 1e-4);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "two/model/adapter_model.safetensors"));
  const auto start = events_named(dir_ / "two/events.jsonl", "start").at(0);
  EXPECT_LT(start["trainable_parameters"].get<int64_t>(), start["parameters"].get<int64_t>() / 10);
}

// lora.base_precision = bf16: the frozen base held in bf16 (half its memory) trains the adapters as the fp32
// base does under the same bf16 autocast (only LayerNorm and embedding weights round differently).
TEST_F(DataParallel, LoraOnABf16BaseTracksTheFp32Base) {
  auto sets = lora_on_a_trained_base();
  sets.insert(sets.end(), {"train.max_steps=10", "train.precision=bf16"});
  auto fp32 = train("fp32-base", sets, 1);
  ASSERT_EQ(fp32.exit_code, 0) << fp32.output;
  auto with_bf16 = sets;
  with_bf16.push_back("lora.base_precision=bf16");
  auto bf16 = train("bf16-base", with_bf16, 1);
  ASSERT_EQ(bf16.exit_code, 0) << bf16.output;
  const double diff = max_abs_diff(loss_curve(dir_ / "fp32-base"), loss_curve(dir_ / "bf16-base"));
  std::printf("LoRA on a bf16 base vs an fp32 base, 10 steps: max |loss diff| = %.3g\n", diff);
  EXPECT_LT(diff, 2e-2);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "bf16-base/model/adapter_model.safetensors"));
  // Without bf16 compute the bf16 base is refused, naming the key.
  auto refused = train("refused", {sets[0], sets[1], "train.precision=fp32", "lora.base_precision=bf16"}, 1);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("lora.base_precision"), std::string::npos) << refused.output;
}

TEST_F(DataParallel, LocalSgdWithK1AndPlainSgdEqualsSync) {
  // A learning rate in the stable regime: at high rates SGD on this tiny model is chaotic, and the last-bit
  // rounding differences between the two (equal in exact arithmetic) grow past any tolerance.
  const std::vector<std::string> common = {"model.dropout=0",        "train.max_steps=30",     "train.optimizer=sgd",
                                           "train.lr=0.2",           "train.temperature=0.2",  "train.max_grad_norm=0",
                                           "train.learn_temperature=false", "parallel.global_negatives=false"};
  auto sync_sets = common;
  sync_sets.push_back("parallel.mode=sync");
  auto local_sets = common;
  local_sets.insert(local_sets.end(), {"parallel.mode=localsgd", "parallel.average_every=1"});
  auto s = train("sync", sync_sets, 2);
  ASSERT_EQ(s.exit_code, 0) << s.output << read_file(dir_ / "sync/worker.rank1.log");
  auto l = train("local", local_sets, 2);
  ASSERT_EQ(l.exit_code, 0) << l.output << read_file(dir_ / "local/worker.rank1.log");
  // Not vacuous: without averaging (K larger than the run) the replicas drift apart and the curve differs.
  auto never_sets = local_sets;
  never_sets.back() = "parallel.average_every=1000";
  auto n = train("never", never_sets, 2);
  ASSERT_EQ(n.exit_code, 0) << n.output;
  const auto a = loss_curve(dir_ / "sync"), b = loss_curve(dir_ / "local");
  const double diff = max_abs_diff(a, b), drift = max_abs_diff(a, loss_curve(dir_ / "never"));
  std::printf("localsgd K=1 vs sync (SGD, 2 replicas, 30 steps): max |loss diff| = %.3g; K=1000 vs sync: %.3g\n",
              diff, drift);
  EXPECT_LT(diff, 1e-4);
  EXPECT_GT(drift, 1e-2);
  const auto averages = events_named(dir_ / "local/events.jsonl", "average");
  ASSERT_EQ(averages.size(), 30u);
  EXPECT_EQ(averages[0]["replica_samples"], nlohmann::json({8, 8}));
}

TEST_F(DataParallel, DynamicBatchClosesTheStepTimeGapOfASlowedReplica) {
  const std::vector<std::string> sets = {"train.max_steps=100",          "train.batch_size=48",
                                         "train.checkpoint_every=0",     "parallel.dynamic_batch=true",
                                         "parallel.rebalance_every=10",  "parallel.debug_slowdown_rank=1",
                                         "parallel.debug_slowdown=2",    "model.hidden_size=128",
                                         "model.heads=4",                "model.intermediate_size=512",
                                         "train.precision=fp32"};
  write_squad_pairs(dir_ / "pairs.jsonl", 1000);  // 240 pairs have too few distinct positives for batch 48
  auto r = train("dyn", sets, 2);
  ASSERT_EQ(r.exit_code, 0) << r.output << read_file(dir_ / "dyn/worker.rank1.log");
  // Medians over steps of each replica's own compute time, from the events of this one run.
  const auto progress = events_named(dir_ / "dyn/events.jsonl", "progress");
  ASSERT_EQ(progress.size(), 100u);
  const auto gap = [&](size_t from, size_t to) {
    std::vector<double> t0, t1;
    for (size_t i = from; i < to; ++i) {
      t0.push_back(progress[i]["replica_compute_s"][0].get<double>());
      t1.push_back(progress[i]["replica_compute_s"][1].get<double>());
    }
    std::nth_element(t0.begin(), t0.begin() + t0.size() / 2, t0.end());
    std::nth_element(t1.begin(), t1.begin() + t1.size() / 2, t1.end());
    const double a = t0[t0.size() / 2], b = t1[t1.size() / 2];
    return std::abs(a - b) / std::max(a, b);
  };
  const double before = gap(0, 10), after = gap(60, 100);
  const auto& last = progress.back()["replica_batches"];
  std::printf("dynamic batch, rank 1 slowed 2x: step-time gap %.1f%% with 24/24 -> %.1f%% with %d/%d\n",
              100 * before, 100 * after, last[0].get<int>(), last[1].get<int>());
  // Timings on a shared machine are noisy (CI runs two tests at once): the claims are that the 2x slowdown
  // shows, that the re-split at least halves the gap, and that the split leans to rank 0 without starving
  // rank 1: 32/16 when compute is linear in the batch, more on rank 0 for the per-step cost that does not
  // shrink with the batch (the sleep doubles it on rank 1 too). The model is wider than the other tests' so
  // that this fixed cost is a small part of a step: at hidden 32 it was most of it, the split hit rank 1's
  // floor (min_batch_fraction: 6) and the gap could not close. fp32 for the same reason: under bf16 on a CPU with
  // AMX a sample costs so little that the split ran to 38-42/6-10 (2026-12-04). Measured here: 33-37/11-15, gap
  // 50-57 % -> 1-7 %, alone and with a second copy running beside it; fp32 on the AMX Xeon 32-33/15-16, 50 % -> 2-5 %.
  EXPECT_GT(before, 0.3);
  EXPECT_LT(after, before / 2);
  EXPECT_GE(last[0].get<int>(), 28);
  EXPECT_LE(last[0].get<int>(), 40);
  EXPECT_EQ(last[0].get<int>() + last[1].get<int>(), 48);
  EXPECT_EQ(events_named(dir_ / "dyn/events.jsonl", "rebalance").size(), 10u);
}

TEST_F(DataParallel, SigtermStopsAllReplicasAndTheRunResumesWithOtherReplicaCounts) {
  ASSERT_EQ(train_and_stop("run", {}, 2, 12), 75) << read_file(dir_ / "run.log");
  ASSERT_EQ(train_and_stop("run", {}, 3, 25), 75) << read_file(dir_ / "run.log");
  auto rest = train("run", {}, 1);
  ASSERT_EQ(rest.exit_code, 0) << rest.output;
  const auto events = dir_ / "run/events.jsonl";
  const auto starts = events_named(events, "start");
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0]["parallel"]["replicas"], 2);
  EXPECT_EQ(starts[1]["parallel"]["replicas"], 3);
  EXPECT_TRUE(starts[2]["parallel"].is_null());
  EXPECT_FALSE(starts[1]["resumed_from"].is_null());
  EXPECT_FALSE(starts[2]["resumed_from"].is_null());
  EXPECT_EQ(events_named(events, "preempted").size(), 2u);
  const auto done = events_named(events, "done");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0]["step"], 40);
  EXPECT_EQ(done[0]["samples"], 40 * 16);  // global samples: no step trained twice or skipped
}

TEST_F(DataParallel, AReplicaThatDiesMakesTheJobResumable) {
  auto r = train("run", {"parallel.debug_kill_rank=1", "parallel.debug_kill_step=12", "train.checkpoint_every=5",
                         "parallel.timeout_s=30"}, 2);
  EXPECT_EQ(r.exit_code, 75) << r.output << read_file(dir_ / "run/worker.rank1.log");
  EXPECT_EQ(events_named(dir_ / "run/events.jsonl", "peer_lost").size(), 1u);
  auto rest = train("run", {"train.checkpoint_every=5"}, 2);
  ASSERT_EQ(rest.exit_code, 0) << rest.output << read_file(dir_ / "run/worker.rank1.log");
  const auto starts = events_named(dir_ / "run/events.jsonl", "start");
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[1]["step"], 10);
}

// The scheduler's side (issue 7, item 6): `ragmig submit --replicas 2` and `ragmig run` start both ranks
// together on two CPU slots with RANK/WORLD_SIZE and a shared rendezvous; a replica that dies makes the
// attempt exit 75, the job is requeued (not failed) and its next attempt resumes from the checkpoint.
TEST_F(DataParallel, TheSchedulerRunsAGangAndRequeuesItWhenAReplicaDies) {
  const std::string state = (dir_ / "state").string();
  const std::string cmd = "ragmig train " + (dir_ / "cfg.toml").string() +
                          " --quiet --set train.checkpoint_every=5 --set parallel.timeout_s=30"
                          " --set parallel.debug_kill_rank=1 --set parallel.debug_kill_step=12";
  auto submitted = run_ragmig({"submit", "--state", state, "--replicas", "2", "--slots", "cpu:1", "--cmd", cmd});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  auto run = run_ragmig({"run", "--state", state, "--until-empty", "--cpu-slots", "2", "--backoff", "0"});
  // On any failure the scheduler's output, the events and both ranks' logs say which rank ended how. (So found,
  // 2026-12-01: a first attempt that exited 1 after 37 s was rank 0's store failing with EADDRINUSE on a port drawn
  // in the kernel's ephemeral range, and rank 1 timing out; ports are now drawn below it and probed.)
  const auto logs = [&] {
    std::string out = "\n--- ragmig run:\n" + run.output;
    for (const char* f : {"events.jsonl", "worker.log", "worker.rank1.log"})
      if (std::filesystem::exists(dir_ / "state/runs/1" / f))
        out += std::string("\n--- ") + f + ":\n" + read_file(dir_ / "state/runs/1" / f);
    return out;
  };
  ASSERT_EQ(run.exit_code, 0) << logs();
  EXPECT_NE(run.output.find("cpu:0,cpu:1"), std::string::npos) << logs();  // one attempt on both slots
  const auto events = dir_ / "state/runs/1/events.jsonl";
  const auto starts = events_named(events, "start");
  ASSERT_EQ(starts.size(), 2u) << logs();
  for (const auto& s : starts) {
    EXPECT_EQ(s["parallel"]["replicas"], 2);
    EXPECT_EQ(s["parallel"]["rendezvous"], "env");  // ranks from the executor's RANK/WORLD_SIZE
  }
  EXPECT_TRUE(starts[0]["resumed_from"].is_null());
  EXPECT_EQ(starts[1]["step"], 10) << logs();
  EXPECT_EQ(events_named(events, "peer_lost").size(), 1u) << logs();
  const auto done = events_named(events, "done");
  ASSERT_EQ(done.size(), 1u) << logs();
  EXPECT_EQ(done[0]["step"], 40);
  EXPECT_EQ(done[0]["samples"], 40 * 16);
  auto status = run_ragmig({"status", "--state", state, "1", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.output;
  const auto j = output_json(status);
  // Requeued, never failed.
  EXPECT_EQ(j.dump().find("\"failed\""), std::string::npos) << j.dump(1) << logs();
}

}  // namespace
}  // namespace ragmig::testing
