// `ragmig sim`: replays a workload (a cluster trace, a generated sweep, or a jobs CSV) on a described
// cluster under one or more policies, through the same scheduler loop as `ragmig run`, and prints one row
// per policy. `ragmig sim measure` writes the measurements file of a real run for the simulator to use.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <thread>

#include "apps/command.h"
#include "core/atomic_file.h"
#include "core/cpu_threads.h"
#include "core/error.h"
#include "core/path_check.h"
#include "sched/policy.h"
#include "sched/store.h"
#include "sim/measurements.h"
#include "sim/report.h"
#include "sim/simulation.h"
#include "sim/sweep.h"

namespace ragmig::apps {
namespace {

// Where MISO's table is looked for without --throughputs: the shared data folder ($RAGMIG_DATA, else
// ../shared/data from the working directory).
std::filesystem::path default_throughputs() {
  const char* env = std::getenv("RAGMIG_DATA");
  return std::filesystem::path(env ? env : "../shared/data") / "traces" / "miso-a100-mig-iteration-seconds.txt";
}

struct SimArgs {
  std::string workload, cluster, policy = "fifo", timeline, state = sched::default_state_dir(), out;
  std::vector<std::string> throughputs, measurements;
  uint64_t seed = 1;
  bool json = false;
  int threads = 0;  ///< policies simulated at once; 0: one per usable core
  sim::SimOptions options;
};

// `ragmig sim measure`: the throughputs a real run's state folder measured, as a measurements file.
int write_measurements(const SimArgs& args) {
  if (!std::filesystem::exists(std::filesystem::path(args.state) / "state.db"))
    throw ConfigError("no state folder at " + args.state);
  check_output_file(args.out, "--out");
  sched::Store store(args.state);
  const auto table = sim::measure_throughputs(store);
  write_file_atomic(args.out, sim::format_throughput_table(table));
  fmt::print(stderr, "ragmig sim measure: {} job types written to {}\n", table.size(), args.out);
  return kOk;
}

// A long replay (minutes for a whole trace on a crowded cluster) says where it is on stderr every 10 s.
std::function<void(const sim::SimProgress&)> progress_printer(const std::string& policy) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  return [policy, started, next = started + std::chrono::seconds(10)](const sim::SimProgress& p) mutable {
    const auto now = Clock::now();
    if (now < next) return;
    next = now + std::chrono::seconds(10);
    const size_t done = p.arrived - std::min(p.arrived, p.queued + p.running);
    fmt::print(
        stderr,
        "ragmig sim: {}: day {:.1f} simulated, {} of {} jobs arrived, {} done, {} queued, {} running ({:.0f} s)\n",
        policy, p.simulated_s / 86400, p.arrived, p.jobs, done, p.queued, p.running,
        std::chrono::duration<double>(now - started).count());
  };
}

// Each policy's simulation shares only the workload, the cluster and the model, which it reads: up to
// `threads` run at once, each result in its policy's place (the same results as one after another).
std::vector<sim::SimResult> simulate_policies(const std::vector<std::string>& policies, const sim::Workload& workload,
                                              const sim::Cluster& cluster, const sim::ThroughputModel& model,
                                              const sim::SimOptions& options, int threads) {
  std::vector<sim::SimResult> results(policies.size());
  std::vector<std::exception_ptr> errors(policies.size());
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < policies.size(); i = next++) {
      sim::SimOptions mine = options;
      mine.policy = policies[i];
      mine.on_progress = progress_printer(policies[i]);
      try {
        results[i] = sim::simulate(workload.jobs, cluster, model, mine);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t n = std::min(policies.size(), static_cast<size_t>(threads > 0 ? threads : usable_cores()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

int run_sim(SimArgs& args, const CLI::App& measure) {
  if (measure.parsed()) return write_measurements(args);
  if (args.workload.empty() || args.cluster.empty()) throw ConfigError("--workload and --cluster are required");
  const auto workload_spec = sim::parse_workload_spec(args.workload);
  const auto cluster = sim::build_cluster(sim::parse_cluster_spec(args.cluster));
  const auto policies = sim::split_policy_list(args.policy);
  for (const auto& p : policies) sched::make_policy(p);  // bad specs fail before any work
  if (!args.timeline.empty()) check_output_file(args.timeline, "--timeline");

  std::vector<std::string> tables = args.throughputs;
  std::string none = "none";
  if (tables.empty()) {
    const std::filesystem::path fallback = default_throughputs();
    if (std::filesystem::exists(fallback)) {
      tables.push_back(fallback.string());
    } else {
      const std::string missing =
          fmt::format("{} does not exist (set RAGMIG_DATA to the shared data folder, or give --throughputs)",
                      std::filesystem::absolute(fallback).lexically_normal().string());
      if (workload_spec.kind == sim::WorkloadKind::Miso)
        throw ConfigError("miso:N needs MISO's per-slice table: " + missing);
      none = "none: " + missing;
    }
  }
  tables.insert(tables.end(), args.measurements.begin(), args.measurements.end());
  std::vector<sim::ThroughputTable> read;
  for (const auto& t : tables) read.push_back(sim::read_throughput_table(t));
  const auto model = sim::make_throughput_model(read);
  const auto workload = sim::load_workload(workload_spec, cluster, model, args.seed);
  fmt::print(stderr,
             "ragmig sim: {} jobs of {} on {} ({} slices); throughputs: {} ({} job types, "
             "fallback exponent {:.2f})\n",
             workload.jobs.size(), sim::to_string(workload_spec), args.cluster, cluster.capacity(),
             tables.empty() ? none : fmt::format("{}", fmt::join(tables, ", ")), model.table.size(),
             model.fallback_exponent);
  if (!cluster.gpus.empty())
    fmt::print(stderr,
               "ragmig sim: work bound {:.0f} s (each job at its most efficient slice size, "
               "over {} GPUs)\n",
               sim::work_bound_s(workload.jobs, static_cast<int>(cluster.gpus.size()), model), cluster.gpus.size());
  for (const auto& note : workload.notes) fmt::print(stderr, "ragmig sim: {}\n", note);

  args.options.keep_timeline = !args.timeline.empty();
  const auto results = simulate_policies(policies, workload, cluster, model, args.options, args.threads);
  for (const auto& r : results)
    if (r.unplaceable)
      fmt::print(stderr, "ragmig sim: {}: {} jobs fit no slot of this cluster and were left out\n", r.policy,
                 r.unplaceable);
  if (!args.timeline.empty()) write_file_atomic(args.timeline, sim::format_timeline_csv(results));
  if (args.json)
    fmt::print("{}\n", sim::to_json(results).dump(2));
  else
    fmt::print("{}", sim::format_table(results));
  return kOk;
}

}  // namespace

Command add_sim_command(CLI::App& root) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sub = root.add_subcommand("sim", "Simulate a workload on a cluster under scheduling policies");
  sub->add_option("--workload", args->workload, "philly:PATH | openb:PATH | sweep:N | miso:N | jobs:PATH");
  sub->add_option("--cluster", args->cluster,
                  "pools <count>x<model>[:mig=<mix>|auto] joined by ',': 1000xV100, 64xA100-40GB, "
                  "8xH200:mig=7x1g.18gb, 8xH200:mig=auto, 3xcpu");
  sub->add_option("--policy", args->policy,
                  "policies joined by ',': fifo,priority,srtf,ljf,las(thresholds=3600:36000), each optionally "
                  "+dynbatch")
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "seed of generated workloads")->capture_default_str();
  sub->add_flag("--json", args->json, "print a JSON list, one object per policy");
  sub->add_option("--timeline", args->timeline, "write slot occupancy over time to this CSV file");
  sub->add_option("--throughputs", args->throughputs,
                  "seconds-per-iteration tables (MISO's format; default: the MISO table in $RAGMIG_DATA or "
                  "../shared/data)");
  sub->add_option("--measurements", args->measurements,
                  "measurements files of real runs (`ragmig sim measure`), "
                  "overriding the tables");
  sub->add_option("--tick", args->options.tick_s,
                  "seconds between scheduler passes while jobs wait (where a pass can decide on time alone: a "
                  "preemptive policy, +dynbatch, mig=auto; elsewhere passes come with arrivals and exits only)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--checkpoint-s", args->options.costs.checkpoint_s, "preemption: seconds from stop to exit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--restart-s", args->options.costs.restart_s, "preemption: seconds before a resumed job progresses")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--mig-step-s", args->options.costs.mig_step_s, "seconds per MIG instance destroyed or created")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--migrate", args->options.migrate,
                "mig=auto GPUs may checkpoint running jobs to move them to a better layout when the time won "
                "exceeds --gain-factor x the cost (checkpoint, restart, MIG steps)");
  sub->add_option("--gain-factor", args->options.gain_factor, "--migrate: how many times its cost a move must win")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--efficiency-weight", args->options.efficiency_weight,
                  "mig=auto: how much a job's efficiency per slice weighs in the plan: 0 maximises summed job speed "
                  "(average JCT), 1 the work done at each job's most efficient slice size (makespan)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--drain-after", args->options.drain_after_s,
                  "mig=auto: seconds with nothing queued and nothing arriving after which the jobs left are a batch's "
                  "last, and the plan gives the larger slices to those that would end last (negative: never)")
      ->capture_default_str();
  sub->add_option("--threads", args->threads,
                  "policies simulated at once (0: one per usable core); each policy's results are the same either way")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--min-interval", args->options.min_interval_s,
                  "--migrate: seconds between two moves on one GPU"
                  " (default: 20 x a move's cost, checkpoint + restart + 2 MIG steps)")
      ->check(CLI::NonNegativeNumber);
  CLI::App* measure = sub->add_subcommand("measure", "Write the measurements file of a real run's state folder");
  measure->add_option("--state", args->state, "state folder (default ./.ragmig or $RAGMIG_STATE)");
  measure->add_option("--out", args->out, "the measurements file to write")->required();
  sub->require_subcommand(0, 1);

  return Command{sub, [args, measure] { return run_sim(*args, *measure); }};
}

}  // namespace ragmig::apps
