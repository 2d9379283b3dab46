// bench_sim, two parts in one run:
//  1. how long `ragmig sim` takes to replay the whole Philly trace (82,247 jobs) on 1000xV100 under each
//     policy — the scheduler loop, the policy, placement and the in-memory store included — beside the
//     target;
//  2. MIG scheduling compared on (a) MISO's evaluation trace (miso:100 on 8xA100-40GB, with MISO's cost of a
//     move; again over five seeds, i.e. arrival orders, also at ragmig's move cost) and (b) a retriever sweep
//     (sweep:200 on 8xH200): whole GPUs under FIFO and LAS, every static MIG layout under FIFO (and the best
//     of them), mig=auto without and with migration — average and p95 JCT, makespan beside the work bound,
//     utilisation, preemptions, moved jobs, re-partitions, and each average JCT as a ratio to whole GPUs
//     under the same ordering; then with dynamic batch (+dynbatch); and (c) the sweep on 8xA100-40GB, whose
//     1g.5gb slices hold the base retrievers only at a smaller batch; (b) again over ten seeds (makespan
//     against the work bound); (d) light load: a few of MISO's jobs on few GPUs, mig=auto against whole GPUs;
//     (e) the sweep of (b), and light load, on ragmig's own job types at their speeds measured per slice on an H200.
// Usage: bench_sim [PHILLY_CSV] [POLICY_LIST]; bench_sim --mig runs part 2 only, --philly part 1 only.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <unistd.h>

#include "gpu/layout.h"
#include "gpu/mig_catalog.h"
#include "sim/sweep.h"
#include "sim/workload.h"

#include "sim/report.h"
#include "sim/simulation.h"
#include "sim/traces.h"

using namespace ragmig::sim;

namespace {

std::filesystem::path data_dir() {
  const char* env = std::getenv("RAGMIG_DATA");
  return env ? env : RAGMIG_DATA_DIR;
}

// The distinct maximal MIG mixes of a GPU model (no media-extension profiles), e.g. "7x1g.18gb".
std::vector<std::string> static_mixes(const std::string& model) {
  const auto& catalog = ragmig::gpu::gpu_catalog(model);
  std::vector<std::string> plain;
  for (const auto& p : catalog.profiles)
    if (!p.media_extensions()) plain.push_back(p.name);
  std::set<std::string> mixes;
  for (const auto& layout : ragmig::gpu::enumerate_layouts(catalog, {.maximal_only = true, .profiles = plain, .base = {}}))
    mixes.insert(ragmig::gpu::to_string(catalog, ragmig::gpu::mix_of(layout)));
  return {mixes.begin(), mixes.end()};
}

// The static layout with the lowest average JCT of those offered (a negative average: the layout could not
// hold every job).
struct BestStatic {
  std::string mix;
  double avg_jct = 0;
  void offer(const std::string& m, double avg) {
    if (avg >= 0 && (mix.empty() || avg < avg_jct)) {
      mix = m;
      avg_jct = avg;
    }
  }
};

// MISO's cost of moving a job: its simulator stalls a moved job 5 s (`--overhead`, its measured mean; MIG
// steps not counted apart), where ragmig's defaults are 10 s checkpoint + 20 s restart + 2 x 2 s MIG steps.
const SimCosts kMisoCosts{.checkpoint_s = 0, .restart_s = 5, .mig_step_s = 0};

void compare_mig(const std::string& title, const std::string& workload_spec, int gpus, const std::string& model_name,
                 const ThroughputModel& model, const SimCosts& costs = {}) {
  const std::string whole = fmt::format("{}x{}", gpus, model_name);
  const Cluster whole_cluster = build_cluster(parse_cluster_spec(whole));
  const Workload workload = load_workload(parse_workload_spec(workload_spec), whole_cluster, model, 1);
  const double bound = work_bound_s(workload.jobs, gpus, model);
  fmt::print("\n{}: {} ({} jobs) on {}; work bound {:.0f} s; a move costs {:.0f} s checkpoint + {:.0f} s restart + "
             "{:.0f} s per MIG step\n",
             title, workload_spec, workload.jobs.size(), whole, bound, costs.checkpoint_s, costs.restart_s,
             costs.mig_step_s);
  fmt::print("{:<56} {:>9} {:>9} {:>9} {:>7} {:>6} {:>7} {:>6} {:>7} {:>9} {:>7}\n", "setting", "avg JCT", "p95 JCT",
             "makespan", "/bound", "util", "preempt", "moved", "repart", "avg/whole", "wall(s)");
  std::map<std::string, double> whole_avg;  // per policy
  auto row = [&](const std::string& label, const std::string& spec, const std::string& policy, bool migrate) {
    SimOptions options;
    options.policy = policy;
    options.migrate = migrate;
    options.costs = costs;
    const auto r = simulate(workload.jobs, build_cluster(parse_cluster_spec(spec)), model, options);
    if (r.unplaceable > 0) {
      fmt::print("{:<56} {} jobs fit no slot of this layout: left out of the comparison\n", label, r.unplaceable);
      return r;
    }
    const auto& m = r.metrics;
    const std::string order = policy.substr(0, policy.find('+'));  // ratios against whole GPUs in the same order
    if (!whole_avg.count(order)) whole_avg[order] = m.avg_jct;
    fmt::print("{:<56} {:>9.0f} {:>9.0f} {:>9.0f} {:>7.2f} {:>5.1f}% {:>7} {:>6} {:>7} {:>9.2f} {:>7.2f}\n", label,
               m.avg_jct, m.p95_jct, m.makespan, m.makespan / bound, 100 * m.utilization, r.preemptions, r.migrations,
               r.repartitions, m.avg_jct / whole_avg[order], r.wall_s);
    return r;
  };
  row("whole GPUs, fifo", whole, "fifo", false);
  row("whole GPUs, las", whole, "las", false);
  BestStatic best;
  for (const auto& mix : static_mixes(model_name)) {
    const auto r = row("static " + mix + ", fifo", whole + ":mig=" + mix, "fifo", false);
    best.offer(mix, r.unplaceable == 0 ? r.metrics.avg_jct : -1);
  }
  const auto automatic = row("mig=auto, fifo", whole + ":mig=auto", "fifo", false);
  const auto moved = row("mig=auto + migration, fifo", whole + ":mig=auto", "fifo", true);
  const auto moved_las = row("mig=auto + migration, las", whole + ":mig=auto", "las", true);
  row("whole GPUs, fifo+dynbatch", whole, "fifo+dynbatch", false);
  if (!best.mix.empty())
    row("static " + best.mix + ", fifo+dynbatch", whole + ":mig=" + best.mix, "fifo+dynbatch", false);
  const auto dynamic = row("mig=auto + migration, fifo+dynbatch", whole + ":mig=auto", "fifo+dynbatch", true);
  const auto dynamic_las = row("mig=auto + migration, las+dynbatch", whole + ":mig=auto", "las+dynbatch", true);
  // Longest job first: what a batch's makespan asks for (the batch's end is when its sweep has an answer).
  row("whole GPUs, ljf", whole, "ljf", false);
  const auto dynamic_ljf = row("mig=auto + migration, ljf+dynbatch", whole + ":mig=auto", "ljf+dynbatch", true);
  fmt::print("best static layout (fifo): {} (avg JCT {:.0f})\n", best.mix.empty() ? "none" : best.mix, best.avg_jct);
  fmt::print("mig=auto + migration: average JCT {:.0f}% lower than whole GPUs under fifo, {:.0f}% under las, {:.0f}% "
             "lower than the best static layout; makespan {:.2f}x the work bound\n",
             100 * (1 - moved.metrics.avg_jct / whole_avg["fifo"]), 100 * (1 - moved_las.metrics.avg_jct / whole_avg["las"]),
             best.mix.empty() ? 0.0 : 100 * (1 - moved.metrics.avg_jct / best.avg_jct), moved.metrics.makespan / bound);
  fmt::print("with dynamic batch (+dynbatch): average JCT {:.0f}% lower than whole GPUs under fifo, {:.0f}% under las; "
             "makespan {:.2f}x the work bound\n",
             100 * (1 - dynamic.metrics.avg_jct / whole_avg["fifo"]), 100 * (1 - dynamic_las.metrics.avg_jct / whole_avg["las"]),
             dynamic.metrics.makespan / bound);
  fmt::print("longest job first (ljf+dynbatch): average JCT {:.0f}% lower than whole GPUs under ljf; makespan {:.2f}x "
             "the work bound\n",
             100 * (1 - dynamic_ljf.metrics.avg_jct / whole_avg["ljf"]), dynamic_ljf.metrics.makespan / bound);
  const double worst = std::max({automatic.metrics.avg_jct / whole_avg["fifo"], moved.metrics.avg_jct / whole_avg["fifo"],
                                 moved_las.metrics.avg_jct / whole_avg["las"], dynamic.metrics.avg_jct / whole_avg["fifo"],
                                 dynamic_las.metrics.avg_jct / whole_avg["las"],
                                 dynamic_ljf.metrics.avg_jct / whole_avg["ljf"]});
  fmt::print("worst mig=auto average JCT against whole GPUs under the same policy: {:.2f}x\n", worst);
}

// Average JCT of `jobs` on the cluster `spec` under fifo; negative where some job fits no slot of it.
double fifo_avg_jct(const std::vector<SimJob>& jobs, const std::string& spec, const ThroughputModel& model, bool migrate,
                    const SimCosts& costs) {
  SimOptions options;
  options.policy = "fifo";
  options.migrate = migrate;
  options.costs = costs;
  const auto r = simulate(jobs, build_cluster(parse_cluster_spec(spec)), model, options);
  return r.unplaceable > 0 ? -1.0 : r.metrics.avg_jct;
}

// One seed is one arrival order: (a) again for seeds 1-5, whole GPUs, the best static layout and mig=auto with
// migration under fifo, at ragmig's move costs and at MISO's; each seed's ratios and their means.
void miso_seeds(const ThroughputModel& model) {
  const std::string whole = "8xA100-40GB";
  const Cluster whole_cluster = build_cluster(parse_cluster_spec(whole));
  auto avg_jct = [&](const std::vector<SimJob>& jobs, const std::string& spec, bool migrate, const SimCosts& costs) {
    return fifo_avg_jct(jobs, spec, model, migrate, costs);
  };
  fmt::print("\n(a) over seeds (arrival orders), fifo: average JCT; mig=auto + migration at ragmig's move cost (34 s) "
             "and at MISO's (5 s)\n{:<6} {:>9} {:>28} {:>9} {:>10} {:>10} {:>9} {:>10} {:>10}\n",
             "seed", "whole", "best static", "mig 34 s", "vs whole", "vs static", "mig 5 s", "vs whole", "vs static");
  double sum[2][2] = {};  // [cost][whole, static]
  const int seeds = 5;
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto jobs = load_workload(parse_workload_spec("miso:100"), whole_cluster, model, static_cast<uint64_t>(seed)).jobs;
    const double w = avg_jct(jobs, whole, false, {});
    BestStatic best;
    for (const auto& mix : static_mixes("A100-40GB")) best.offer(mix, avg_jct(jobs, whole + ":mig=" + mix, false, {}));
    const double b = best.avg_jct;
    const double m[2] = {avg_jct(jobs, whole + ":mig=auto", true, {}),
                         avg_jct(jobs, whole + ":mig=auto", true, kMisoCosts)};
    fmt::print("{:<6} {:>9.0f} {:>28}", seed, w, fmt::format("{} {:.0f}", best.mix, b));
    for (int c = 0; c < 2; ++c) {
      fmt::print(" {:>9.0f} {:>9.0f}% {:>9.0f}%", m[c], 100 * (1 - m[c] / w), 100 * (1 - m[c] / b));
      sum[c][0] += 1 - m[c] / w;
      sum[c][1] += 1 - m[c] / b;
    }
    fmt::print("\n");
  }
  for (int c = 0; c < 2; ++c)
    fmt::print("mean over {} seeds, a move costing {}: mig=auto + migration {:.0f}% lower average JCT than whole GPUs, "
               "{:.0f}% lower than the best static layout\n",
               seeds, c == 0 ? "34 s (ragmig's default)" : "5 s (MISO's)", 100 * sum[c][0] / seeds,
               100 * sum[c][1] / seeds);
}

// (b) again for seeds 1-10 (one seed is one draw of the sweep's trials): whole GPUs and mig=auto with migration
// under fifo+dynbatch, its average JCT against whole GPUs' and its makespan against the work bound, with and
// without the rule for a batch's end (exec::RebalanceOptions::drain_after_s); then the same under ljf+dynbatch
// (longest job first) — one seed's makespan moves by a few percent with any change to the plan, so the claim is
// made over ten.
void sweep_seeds(const ThroughputModel& model, const std::string& part) {
  const std::string whole = "8xH200";
  const Cluster whole_cluster = build_cluster(parse_cluster_spec(whole));
  fmt::print("\n{} over seeds: whole GPUs and mig=auto + migration, fifo+dynbatch (and without the batch-end rule: "
             "--drain-after -1), then ljf+dynbatch\n{:<6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>8} | {:>9} "
             "{:>9} {:>9} {:>9} {:>8}\n",
             part, "seed", "bound", "whole", "mig", "lower", "makespan", "/bound", "no rule", "/bound", "ljf whole",
             "ljf mig", "lower", "makespan", "/bound");
  const int seeds = 10;
  struct Mean {
    double lower = 0, makespan = 0, worst = 0;
    int within = 0;
    void add(double whole_avg, const Metrics& m, double bound, int seeds) {
      lower += whole_avg / m.avg_jct / seeds;
      makespan += m.makespan / bound / seeds;
      worst = std::max(worst, m.makespan / bound);
      within += m.makespan <= 1.10 * bound;
    }
  } fifo, ljf;
  double without_rule = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto jobs =
        load_workload(parse_workload_spec("sweep:200"), whole_cluster, model, static_cast<uint64_t>(seed)).jobs;
    const double bound = work_bound_s(jobs, 8, model);
    const auto run = [&](const std::string& policy, const std::string& spec, bool migrate, double drain_after_s) {
      SimOptions options;
      options.policy = policy;
      options.migrate = migrate;
      options.drain_after_s = drain_after_s;
      return simulate(jobs, build_cluster(parse_cluster_spec(spec)), model, options).metrics;
    };
    const double drain = SimOptions{}.drain_after_s;
    const auto w = run("fifo+dynbatch", whole, false, -1);
    const auto m = run("fifo+dynbatch", whole + ":mig=auto", true, drain);
    const auto n = run("fifo+dynbatch", whole + ":mig=auto", true, -1);
    const auto lw = run("ljf+dynbatch", whole, false, -1);
    const auto lm = run("ljf+dynbatch", whole + ":mig=auto", true, drain);
    fmt::print("{:<6} {:>9.0f} {:>9.0f} {:>9.0f} {:>8.2f}x {:>9.0f} {:>8.3f} {:>9.0f} {:>8.3f} | {:>9.0f} {:>9.0f} "
               "{:>8.2f}x {:>9.0f} {:>8.3f}\n",
               seed, bound, w.avg_jct, m.avg_jct, w.avg_jct / m.avg_jct, m.makespan, m.makespan / bound, n.makespan,
               n.makespan / bound, lw.avg_jct, lm.avg_jct, lw.avg_jct / lm.avg_jct, lm.makespan, lm.makespan / bound);
    fifo.add(w.avg_jct, m, bound, seeds);
    ljf.add(lw.avg_jct, lm, bound, seeds);
    without_rule += n.makespan / bound / seeds;
  }
  for (const auto& [name, mean] : {std::pair{"fifo+dynbatch", fifo}, std::pair{"ljf+dynbatch", ljf}})
    fmt::print("mean over {} seeds: mig=auto + migration, {}: average JCT {:.2f}x lower than whole GPUs under the same "
               "policy; makespan {:.3f}x the work bound (worst {:.3f}x, {} of {} within 1.10x)\n",
               seeds, name, mean.lower, mean.makespan, mean.worst, mean.within, seeds);
  fmt::print("fifo+dynbatch without the batch-end rule: makespan {:.3f}x the work bound\n", without_rule);
}

// (d) Light load: a few of MISO's jobs on few GPUs, where a queue seldom forms and a move (34 s at ragmig's
// costs) is a large part of a job of one to three minutes; and small sweeps submitted at once on more GPUs
// than they keep busy for long. mig=auto's average JCT against whole GPUs under fifo,
// without and with migration, at both move costs, seeds 1-3; the rows worse than whole GPUs by more than 2 %
// are marked (the bound).
using Runs = std::vector<std::pair<std::string, std::string>>;  // (workload, cluster)

void light_load(const ThroughputModel& model, const std::string& part, const Runs& runs) {
  fmt::print("\n{} light load, fifo: mig=auto's average JCT / whole GPUs' (* above 1.02)\n{:<24} {:>5} {:>9} {:>9} "
             "{:>9} {:>9}\n",
             part, "workload on cluster", "seed", "whole(s)", "auto", "+moves", "+moves 5s");
  int above = 0, rows = 0;
  for (const auto& [workload, cluster] : runs) {
    const Cluster whole_cluster = build_cluster(parse_cluster_spec(cluster));
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const auto jobs = load_workload(parse_workload_spec(workload), whole_cluster, model, seed).jobs;
      auto avg_jct = [&](const std::string& spec, bool migrate, const SimCosts& costs) {
        return fifo_avg_jct(jobs, spec, model, migrate, costs);
      };
      const double w = avg_jct(cluster, false, {});
      const double r[3] = {avg_jct(cluster + ":mig=auto", false, {}) / w, avg_jct(cluster + ":mig=auto", true, {}) / w,
                           avg_jct(cluster + ":mig=auto", true, kMisoCosts) / w};
      fmt::print("{:<24} {:>5} {:>9.0f}", workload + " on " + cluster, seed, w);
      for (double x : r) {
        fmt::print(" {:>8.2f}{}", x, x > 1.02 ? '*' : ' ');
        above += x > 1.02;
        ++rows;
      }
      fmt::print("\n");
    }
  }
  fmt::print("{} of {} mig=auto runs more than 2 % behind whole GPUs\n", above, rows);
}

int compare_mig_all() {
  const auto table = data_dir() / "traces/miso-a100-mig-iteration-seconds.txt";
  if (!std::filesystem::exists(table)) {
    fmt::print(stderr, "bench_sim: no MISO table at {} (set RAGMIG_DATA)\n", table.string());
    return 1;
  }
  const auto model = make_throughput_model({read_throughput_table(table.string())});
  compare_mig("(a) MISO's trace, MISO's move cost", "miso:100", 8, "A100-40GB", model, kMisoCosts);
  miso_seeds(model);
  compare_mig("(b) retriever sweep", "sweep:200", 8, "H200", model);
  sweep_seeds(model, "(b)");
  // The same sweep where the base retrievers' memory (10 GB) exceeds the smallest slice (1g.5gb): what dynamic
  // batch is for.
  compare_mig("(c) retriever sweep, small slices", "sweep:200", 8, "A100-40GB", model);
  light_load(model, "(d)",
             {{"miso:10", "1xA100-40GB"}, {"miso:20", "2xA100-40GB"}, {"miso:40", "2xA100-40GB"},
              {"miso:40", "4xA100-40GB"}, {"miso:60", "4xA100-40GB"}, {"miso:30", "8xA100-40GB"},
              {"sweep:12", "4xH200"}, {"sweep:20", "8xH200"}, {"sweep:16", "8xA100-40GB"}, {"sweep:10", "2xH200"}});
  // (e) The sweep again, its trials drawn from ragmig's own job types at the speeds measured per slice size on
  // an H200 (bench/mig/slice_speed.sh, 2026-12-04; 3g not measured: the power law of throughput.h stands in).
  const auto ragmig_table = std::filesystem::path(RAGMIG_SOURCE_DIR) / "bench/mig/ragmig-slices-h200.txt";
  const auto measured = make_throughput_model({read_throughput_table(ragmig_table.string())});
  compare_mig("(e) retriever sweep, ragmig's H200 per-slice speeds", "sweep:200", 8, "H200", measured);
  sweep_seeds(measured, "(e)");
  light_load(measured, "(e)",
             {{"sweep:6", "1xH200"}, {"sweep:10", "2xH200"}, {"sweep:12", "4xH200"}, {"sweep:20", "8xH200"},
              {"sweep:40", "8xH200"}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--mig") return compare_mig_all();
  if (mode == "--philly") {
    --argc;
    ++argv;
  }
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
  constexpr double kTarget = 2.0;
  // CPU seconds beside wall seconds: on a shared machine the wall time also counts other people's work.
  // Events: each job's arrival and the end of each of its attempts (one per job, one more per preemption).
  fmt::print("{:<40} {:>9} {:>9} {:>9} {:>9} {:>11} {:>10}\n", "policy", "wall(s)", "cpu(s)", "target(s)", "steps",
             "cpu us/step", "events/s");
  for (const auto& policy : split_policy_list(policies)) {
    SimOptions options;
    options.policy = policy;
    const std::clock_t cpu_start = std::clock();
    results.push_back(simulate(workload.jobs, cluster, ThroughputModel{}, options));
    const double cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    const auto& r = results.back();
    const auto events = static_cast<double>(2 * r.metrics.jobs + r.preemptions);
    fmt::print("{:<40} {:>9.2f} {:>9.2f} {:>9.2f} {:>9} {:>11.1f} {:>10.0f}\n", r.policy, r.wall_s, cpu_s, kTarget,
               r.steps, 1e6 * cpu_s / static_cast<double>(r.steps), events / r.wall_s);
  }
  // The reference, in the same run: fifo with the jobs in the SQLite store `ragmig run` keeps (what the simulator
  // used before MemoryJobs), which must take the same decisions.
  {
    SimOptions options;
    options.sqlite_state_dir = (std::filesystem::temp_directory_path() / fmt::format("ragmig-bench-sim-{}", ::getpid()))
                                   .string();
    std::filesystem::remove_all(options.sqlite_state_dir);
    const std::clock_t cpu_start = std::clock();
    const SimResult sqlite = simulate(workload.jobs, cluster, ThroughputModel{}, options);
    const double cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    std::filesystem::remove_all(options.sqlite_state_dir);
    fmt::print("{:<40} {:>9.2f} {:>9.2f} {:>9} {:>9} {:>11.1f} {:>10.0f}\n", "fifo, jobs in SQLite (reference)",
               sqlite.wall_s, cpu_s, "", sqlite.steps, 1e6 * cpu_s / static_cast<double>(sqlite.steps),
               static_cast<double>(2 * sqlite.metrics.jobs + sqlite.preemptions) / sqlite.wall_s);
    const auto fifo = std::find_if(results.begin(), results.end(), [](const SimResult& r) { return r.policy == "fifo"; });
    if (fifo != results.end())
      fmt::print("fifo in memory / in SQLite: {:.2f}x the wall time; the same decisions: {}\n",
                 fifo->wall_s / sqlite.wall_s,
                 fifo->steps == sqlite.steps && fifo->preemptions == sqlite.preemptions &&
                         fifo->metrics.avg_jct == sqlite.metrics.avg_jct && fifo->metrics.makespan == sqlite.metrics.makespan
                     ? "yes"
                     : "NO");
  }
  fmt::print("\n{}", format_table(results));
  return mode == "--philly" ? 0 : compare_mig_all();
}
