// bench_dp: what data parallelism buys on this machine. Runs the real `ragmig train` on the same config as
// one process and as two replicas (sync mode, the global batch fixed), and prints each run's training
// samples/s (median of its progress windows after the first) beside the one-process run. On CPU the two
// replicas share the cores (one thread each where one process takes them all). With --device cuda it also
// runs two replicas sharing one GPU over Gloo (through host memory, as between MIG instances) and over NCCL
// (a build with RAGMIG_WITH_NCCL). Then two replicas with rank 1 slowed 2x (it sleeps as long again as it
// computed, as a slice with half the speed would), once with the batch split evenly and once with dynamic
// batch: samples/s, the replicas' step-time gap over the second half of the run, and the split it ends with.
// And two replicas averaging parameters every 20 steps (localsgd) instead of gradients every step.
// Each row names the process group the run chose (its start event), e.g. gloo where NCCL was asked for ranks on
// one GPU. On a GPU, a small model's step is mostly fixed costs (launches), which no split of the batch moves:
// give it a model whose step grows with the batch, e.g. --config examples/train-bert-base-gpu.toml --batch 512
// --set 'train.accumulation="none"' --set data.max_examples=22000.
// --runs picks some: e.g. --runs one,even,dynamic (of one, sync (CPU) or gloo and nccl (GPU), localsgd, even,
// dynamic), so that a big model's runs fit a short GPU lease.
// Usage: bench_dp [--device cpu|cuda] [--steps N] [--batch B] [--config F] [--set KEY=VALUE]... [--runs K,...]
#include <fmt/format.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/process.h"  // the tests' real-process helper
#include "train/batch_balancer.h"

namespace fs = std::filesystem;

namespace {

struct Run {
  std::string key;  ///< what --runs names it by
  std::string name;
  int replicas = 1;
  std::string backend = "auto";
  std::vector<std::string> sets;  ///< extra --set overrides
};

std::vector<nlohmann::json> events_named(const fs::path& events, const std::string& name) {
  std::ifstream in(events);
  std::string line;
  std::vector<nlohmann::json> out;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == name) out.push_back(std::move(j));
  }
  return out;
}

// The process group a run of several replicas chose ("gloo", "nccl"), "-" for one process.
std::string chosen_backend(const fs::path& events) {
  const auto start = events_named(events, "start");
  if (start.empty() || !start[0].contains("parallel")) return "-";
  return start[0]["parallel"].value("backend", "-");
}

// Median samples/s of the progress events after the first window (start-up and warm-up left out).
double median_samples_per_s(const std::vector<nlohmann::json>& progress) {
  std::vector<double> rates;
  for (size_t i = 1; i < progress.size(); ++i) rates.push_back(progress[i].value("samples_per_s", 0.0));
  return ragmig::train::median(rates);
}

// train::step_time_gap of the two replicas' median compute seconds per step over the second half of the run,
// and the split of the last step, e.g. "32/16"; empty for one process.
std::pair<double, std::string> gap_and_split(const std::vector<nlohmann::json>& progress) {
  std::vector<double> t0, t1;
  for (size_t i = progress.size() / 2; i < progress.size(); ++i) {
    const auto& c = progress[i]["replica_compute_s"];
    if (!c.is_array() || c.size() != 2) return {0, ""};
    t0.push_back(c[0].get<double>());
    t1.push_back(c[1].get<double>());
  }
  if (t0.empty()) return {0, ""};
  const auto& split = progress.back()["replica_batches"];
  return {ragmig::train::step_time_gap({ragmig::train::median(t0), ragmig::train::median(t1)}),
          fmt::format("{}/{}", split[0].get<int>(), split[1].get<int>())};
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cpu", config = std::string(RAGMIG_SOURCE_DIR) + "/examples/train-squad-tiny.toml";
  int steps = 60, batch = 64;
  std::vector<std::string> common;  // --set overrides of every run
  std::string only;                 // --runs: the keys to run, comma-separated (empty: all)
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--device") device = value;
    else if (flag == "--steps") steps = std::atoi(value.c_str());
    else if (flag == "--batch") batch = std::atoi(value.c_str());
    else if (flag == "--config") config = value;
    else if (flag == "--set") common.push_back(value);
    else if (flag == "--runs") only = "," + value + ",";
    else {
      fmt::print(stderr, "bench_dp: unknown option {}\n", flag);
      return 2;
    }
  }
  std::vector<Run> runs = {{"one", "1 process", 1, "auto", {}}, {"sync", "2 replicas, sync", 2, "gloo", {}}};
  if (device != "cpu")
    runs = {{"one", "1 process", 1, "auto", {}},
            {"gloo", "2 replicas on 1 GPU, Gloo", 2, "gloo", {}},
            {"nccl", "2 replicas on 1 GPU, NCCL", 2, "nccl", {}}};
  // Parameter averaging every K steps: replicas sharing a GPU (or MIG slices of one) talk 1/K as often.
  runs.push_back({"localsgd", device == "cpu" ? "2 replicas, localsgd K=20" : "2 on 1 GPU, localsgd K=20", 2, "gloo",
                  {"parallel.mode=\"localsgd\"", "parallel.average_every=20"}});
  const std::vector<std::string> slowed = {"parallel.debug_slowdown_rank=1", "parallel.debug_slowdown=2"};
  runs.push_back({"even", "rank 1 slowed 2x, even split", 2, "gloo", slowed});
  runs.push_back({"dynamic", "rank 1 slowed 2x, dynamic", 2, "gloo", slowed});
  runs.back().sets.insert(runs.back().sets.end(), {"parallel.dynamic_batch=true", "parallel.rebalance_every=10"});
  if (!only.empty()) {
    std::erase_if(runs, [&](const Run& r) { return only.find("," + r.key + ",") == std::string::npos; });
    if (runs.empty()) {
      fmt::print(stderr, "bench_dp: --runs {} names no run (one, sync or gloo/nccl, localsgd, even, dynamic)\n",
                 only.substr(1, only.size() - 2));
      return 2;
    }
  }
  char pattern[] = "/tmp/ragmig-bench-dp-XXXXXX";
  const fs::path dir = ::mkdtemp(pattern);
  fmt::print("bench_dp: {} on {}, {} steps of global batch {} (sync: each replica takes {})\n", config, device, steps,
             batch, batch / 2);
  fmt::print("{:<32} {:>10} {:>10} {:>9} {:>7} {:>6}\n", "run", "samples/s", "vs 1 proc", "step gap", "split", "group");
  double reference = 0;
  bool failed = false;
  for (size_t k = 0; k < runs.size(); ++k) {
    const Run& r = runs[k];
    const fs::path run = dir / fmt::format("run-{}", k);
    // clang-format off
    std::vector<std::string> args = {RAGMIG_BINARY, "train", config, "--run-dir", run.string(), "--quiet",
                                     "--set", fmt::format("train.max_steps={}", steps),
                                     "--set", fmt::format("train.batch_size={}", batch),
                                     "--set", "train.log_every=5", "--set", "train.checkpoint_every=0",
                                     "--set", "eval.split=\"\"",
                                     "--set", fmt::format("train.device=\"{}\"", device),
                                     "--set", fmt::format("parallel.backend=\"{}\"", r.backend)};
    // clang-format on
    for (const auto& set : common) args.insert(args.end(), {"--set", set});
    for (const auto& set : r.sets) args.insert(args.end(), {"--set", set});
    if (r.replicas > 1) args.insert(args.end(), {"--replicas", std::to_string(r.replicas)});
    const int code = ragmig::testing::BackgroundProcess(args, run.string() + ".log").wait();
    if (code != 0) {
      fmt::print("{:<32} {:>10} {:>10}   (exit {}, see {}.log)\n", r.name, "-", "-", code, run.string());
      failed = true;
      continue;
    }
    const auto progress = events_named(run / "events.jsonl", "progress");
    const double rate = median_samples_per_s(progress);
    const auto [gap, split] = gap_and_split(progress);
    if (r.replicas == 1) reference = rate;
    fmt::print("{:<32} {:>10.1f} {:>10} {:>9} {:>7} {:>6}\n", r.name, rate,
               reference > 0 ? fmt::format("{:.2f}x", rate / reference) : "-",
               split.empty() ? "-" : fmt::format("{:.1f}%", 100 * gap), split.empty() ? "-" : split,
               r.replicas > 1 ? chosen_backend(run / "events.jsonl") : "-");
  }
  if (failed) return 1;  // the logs stay for a look
  fs::remove_all(dir);
  return 0;
}
