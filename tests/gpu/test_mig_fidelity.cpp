// Fidelity with MIG and migration: six jobs run for real by `ragmig run --mig migrate` on the emulated NVML
// driver's H200, then the same workload simulated by `ragmig sim --cluster 1xH200:mig=auto --migrate` with the
// seconds per step and slice that `ragmig sim measure` took from that run, and the same move costs and
// limits. Each job is a worker whose step takes as long as a job of its speed would on its slice (read from
// RAGMIG_SLOT: (g/7)^0.73 of the whole GPU's speed, what the planner assumes of an unmeasured job), which
// checkpoints on SIGTERM (exit 75) and resumes from its checkpoint, so the real run packs the GPU, moves the
// jobs left running onto bigger slices as others end, and loses no step. Average JCT and makespan must agree
// within 10 %; the figures are printed for the record.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "core/atomic_file.h"
#include "gpu/emulated_gpu_fixture.h"

namespace ragmig::testing {
namespace {

using MigFidelity = EmulatedGpuScheduler;

// worker.sh ITERATIONS: steps of 0.05 s on the whole GPU, (7/g)^0.73 times that on a g-slice instance.
constexpr const char* kWorker = R"(#!/bin/sh
total=$1
run=$RAGMIG_RUN_DIR
step=$(cat "$run/checkpoint" 2>/dev/null || echo 0)
g=$(echo "$RAGMIG_SLOT" | sed -n 's/^mig:[0-9]*:\([0-9]\)g\..*/\1/p')
seconds=$(awk -v g="${g:-7}" 'BEGIN { printf "%.4f", 0.05 * (7 / g) ^ 0.73 }')
echo "{\"event\":\"start\",\"step\":$step}" >> "$run/events.jsonl"
trap 'echo $step > "$run/checkpoint"; echo "{\"event\":\"checkpoint\",\"step\":$step}" >> "$run/events.jsonl"; exit 75' TERM
while [ "$step" -lt "$total" ]; do
  sleep "$seconds" & wait $!
  step=$((step + 1))
  echo "$step" >> "$run/trained"
  echo "{\"event\":\"progress\",\"step\":$step}" >> "$run/events.jsonl"
done
echo "{\"event\":\"done\",\"step\":$step}" >> "$run/events.jsonl"
)";

TEST_F(MigFidelity, MigrationRunAndItsSimulationAgreeOnJctAndMakespan) {
  json state = seven_small_instances();
  state["gpus"][0]["instances"] = json::array();
  write_gpus(state);
  const std::string worker = (dir_ / "worker.sh").string();
  write_file_atomic(worker, kWorker);
  // What a move costs here (the worker checkpoints and restarts in well under a second; the emulator's MIG
  // steps take no time) and how often one GPU may move jobs: the same in the run and in the simulation.
  const std::vector<std::string> costs = {"--checkpoint-s", "0.1", "--restart-s", "0.2", "--mig-step-s", "0.01",
                                          "--gain-factor", "2", "--min-interval", "1"};
  std::string csv = "arrival_s,name,type,iterations,slots,priority,estimate_s\n";
  std::vector<int64_t> ids;
  for (int i = 0; i < 6; ++i) {
    const int iterations = 20 + 12 * i;  // 1 to 4 s on the whole GPU
    const std::string estimate = fmt::format("{:.2f}", 0.05 * iterations);
    ids.push_back(submit({"--slots", "10gb:1", "--name", "worker", "--estimate", estimate, "--cmd",
                          fmt::format("sh {} {}", worker, iterations)}));
    csv += fmt::format("0,job{},worker,{},10gb:1,0,{}\n", i, iterations, estimate);
  }
  std::vector<std::string> run_args = {"run", "--until-empty", "--mig", "migrate", "--tick", "0.2"};
  run_args.insert(run_args.end(), costs.begin(), costs.end());
  const auto run = ragmig(run_args);
  ASSERT_EQ(run.exit_code, 0) << run.output;

  double first_start = 1e300, last_end = 0, sum_end = 0;
  int moved = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto j = job(ids[i]);
    ASSERT_EQ(j["state"], "done") << j.dump(2);
    for (const auto& a : j["attempt_list"]) {
      first_start = std::min(first_start, a["started_at"].get<double>());
      moved += a["exit_code"] == 75;
    }
    last_end = std::max(last_end, j["finished_at"].get<double>());
    sum_end += j["finished_at"].get<double>();
    // Every step trained exactly once, across the moves.
    const std::string trained = read_file(std::filesystem::path(j["run_dir"].get<std::string>()) / "trained");
    std::string expected;
    for (int s = 1; s <= 20 + 12 * static_cast<int>(i); ++s) expected += std::to_string(s) + "\n";
    EXPECT_EQ(trained, expected) << "job " << ids[i];
  }
  EXPECT_GE(moved, 1) << "the run moved no job: nothing to compare\n" << run.output;
  const double real_jct = sum_end / static_cast<double>(ids.size()) - first_start;
  const double real_makespan = last_end - first_start;

  const std::string measurements = (dir_ / "measured.txt").string();
  auto r = ragmig({"sim", "measure", "--out", measurements});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  write_file_atomic(dir_ / "jobs.csv", csv);
  std::vector<std::string> sim_args = {RAGMIG_BINARY, "sim", "--workload", "jobs:" + (dir_ / "jobs.csv").string(), "--cluster",
                                       "1xH200:mig=auto", "--migrate", "--policy", "fifo", "--throughputs",
                                       measurements, "--tick", "0.2", "--json"};
  sim_args.insert(sim_args.end(), costs.begin(), costs.end());
  r = run_process(sim_args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto sim = json::parse(r.output.substr(r.output.find('[')))[0];
  ASSERT_EQ(sim["jobs"], 6) << r.output;
  const double sim_jct = sim["avg_jct"], sim_makespan = sim["makespan"];
  const double jct_error = std::abs(sim_jct - real_jct) / real_jct;
  const double makespan_error = std::abs(sim_makespan - real_makespan) / real_makespan;
  std::cout << fmt::format("[ fidelity ] 6 jobs on an emulated H200, mig=auto with migration: real average JCT "
                           "{:.2f} s, makespan {:.2f} s, {} moves; simulated {:.2f} s, {:.2f} s, {} moves; error "
                           "{:.1f} % and {:.1f} %\n{}",
                           real_jct, real_makespan, moved, sim_jct, sim_makespan, sim["migrations"].get<int64_t>(),
                           100 * jct_error, 100 * makespan_error, read_file(measurements));
  RecordProperty("real_avg_jct", std::to_string(real_jct));
  RecordProperty("simulated_avg_jct", std::to_string(sim_jct));
  EXPECT_LT(jct_error, 0.10);
  EXPECT_LT(makespan_error, 0.10);
}

}  // namespace
}  // namespace ragmig::testing
