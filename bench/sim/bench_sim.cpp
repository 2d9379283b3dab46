// bench_sim: how long `ragmig sim` takes to replay the whole Philly trace (82,247 jobs) on 1000xV100 under
// each policy — the scheduler loop, the policy, placement and the in-memory store included — printed beside
// the 5-second target. Usage: bench_sim [PHILLY_CSV] [POLICY_LIST]
#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <cstdlib>
#include <filesystem>

#include "sim/report.h"
#include "sim/simulation.h"
#include "sim/traces.h"

using namespace ragmig::sim;

int main(int argc, char** argv) {
  const char* env = std::getenv("RAGMIG_DATA");
  const std::string path = argc > 1 && argv[1][0] ? argv[1] : (std::filesystem::path(env ? env : RAGMIG_DATA_DIR) /
                                                 "traces/philly-pollux.csv").string();
  const std::string policies = argc > 2 ? argv[2] : "fifo,priority,srtf,las";
  if (!std::filesystem::exists(path)) {
    fmt::print(stderr, "bench_sim: no Philly trace at {} (set RAGMIG_DATA)\n", path);
    return 1;
  }
  const auto read_start = std::chrono::steady_clock::now();
  const Workload workload = read_philly(path);
  const double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();
  const Cluster cluster = build_cluster(parse_cluster_spec("1000xV100"));
  fmt::print("bench_sim: {} Philly jobs on 1000xV100 (trace read in {:.2f} s)\n", workload.jobs.size(), read_s);

  std::vector<SimResult> results;
  constexpr double kTarget = 5.0;
  // CPU seconds beside wall seconds: on a shared machine the wall time also counts other people's work.
  fmt::print("{:<40} {:>9} {:>9} {:>9} {:>9} {:>11}\n", "policy", "wall(s)", "cpu(s)", "target(s)", "steps",
             "cpu us/step");
  for (const auto& policy : split_policy_list(policies)) {
    SimOptions options;
    options.policy = policy;
    const std::clock_t cpu_start = std::clock();
    results.push_back(simulate(workload.jobs, cluster, ThroughputModel{}, options));
    const double cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    const auto& r = results.back();
    fmt::print("{:<40} {:>9.2f} {:>9.2f} {:>9.2f} {:>9} {:>11.1f}\n", r.policy, r.wall_s, cpu_s, kTarget, r.steps,
               1e6 * cpu_s / static_cast<double>(r.steps));
  }
  fmt::print("\n{}", format_table(results));
  return 0;
}
