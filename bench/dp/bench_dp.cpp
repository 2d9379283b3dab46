// bench_dp: what data parallelism buys on this machine. Runs the real `ragmig train` on the same config as
// one process and as two replicas (sync mode, the global batch fixed), and prints each run's training
// samples/s (median of its progress windows after the first) beside the one-process run. On CPU the two
// replicas share the cores (one thread each where one process takes them all). With --device cuda it also
// runs two replicas sharing one GPU over Gloo (through host memory, as between MIG instances) and over NCCL
// (a build with RAGMIG_WITH_NCCL). Usage: bench_dp [--device cpu|cuda] [--steps N] [--batch B] [--config F]
#include <fmt/format.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/process.h"  // the tests' real-process helper

namespace fs = std::filesystem;

namespace {

struct Run {
  std::string name;
  int replicas = 1;
  std::string backend = "auto";
};

// Median samples/s of the progress events after the first window (start-up and warm-up left out).
double median_samples_per_s(const fs::path& events) {
  std::ifstream in(events);
  std::string line;
  std::vector<double> rates;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "progress") rates.push_back(j.value("samples_per_s", 0.0));
  }
  if (rates.size() > 1) rates.erase(rates.begin());
  if (rates.empty()) return 0;
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cpu", config = std::string(RAGMIG_SOURCE_DIR) + "/examples/train-squad-tiny.toml";
  int steps = 60, batch = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--device") device = value;
    else if (flag == "--steps") steps = std::atoi(value.c_str());
    else if (flag == "--batch") batch = std::atoi(value.c_str());
    else if (flag == "--config") config = value;
    else {
      fmt::print(stderr, "bench_dp: unknown option {}\n", flag);
      return 2;
    }
  }
  std::vector<Run> runs = {{"1 process", 1, "auto"}, {"2 replicas, sync", 2, "gloo"}};
  if (device != "cpu") runs = {{"1 process", 1, "auto"}, {"2 replicas on 1 GPU, Gloo", 2, "gloo"},
                               {"2 replicas on 1 GPU, NCCL", 2, "nccl"}};
  char pattern[] = "/tmp/ragmig-bench-dp-XXXXXX";
  const fs::path dir = ::mkdtemp(pattern);
  fmt::print("bench_dp: {} on {}, {} steps of global batch {} (sync: each replica takes {})\n", config, device, steps,
             batch, batch / 2);
  fmt::print("{:<30} {:>12} {:>10}\n", "run", "samples/s", "vs 1 proc");
  double reference = 0;
  for (const auto& r : runs) {
    const fs::path run = dir / fmt::format("run-{}-{}", r.replicas, r.backend);
    std::vector<std::string> args = {RAGMIG_BINARY, "train", config, "--run-dir", run.string(), "--quiet",
                                     "--set", fmt::format("train.max_steps={}", steps),
                                     "--set", fmt::format("train.batch_size={}", batch),
                                     "--set", "train.log_every=5", "--set", "train.checkpoint_every=0",
                                     "--set", "eval.split=\"\"",
                                     "--set", fmt::format("train.device=\"{}\"", device),
                                     "--set", fmt::format("parallel.backend=\"{}\"", r.backend)};
    if (r.replicas > 1) args.insert(args.end(), {"--replicas", std::to_string(r.replicas)});
    const int code = ragmig::testing::BackgroundProcess(args, run.string() + ".log").wait();
    if (code != 0) {
      fmt::print("{:<30} {:>12} {:>10}   (exit {}, see {}.log)\n", r.name, "-", "-", code, run.string());
      continue;
    }
    const double rate = median_samples_per_s(run / "events.jsonl");
    if (r.replicas == 1) reference = rate;
    fmt::print("{:<30} {:>12.1f} {:>10}\n", r.name, rate, reference > 0 ? fmt::format("{:.2f}x", rate / reference) : "-");
  }
  fs::remove_all(dir);
  return 0;
}
