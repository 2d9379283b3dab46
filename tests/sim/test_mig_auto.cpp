// mig=auto on whole workloads: on a retriever sweep, packing by throughput and moving jobs when the queue
// empties beat whole GPUs under the same ordering policy and end near the work bound, the efficiency weight
// trading average JCT for makespan and the jobs that would end last taking the larger slices at the end; on a
// workload that gains nothing from packing it is no worse than whole GPUs; under light load (with moves or
// without, and a sweep submitted at once without them) it stays near them; an alternating queue does not make it
// thrash; random runs keep every instance apart and end every job once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>

#include "sim/simulation.h"
#include "sim/sweep.h"
#include "sim/workload.h"
#include "support/test_support.h"

namespace ragmig::sim {
namespace {

// The four rows of MISO's measured A100 table that sweep:N draws from.
ThroughputModel sweep_model() {
  return make_throughput_model({parse_throughput_table(
      "bert_train2 {\"2g.10gb\": 0.1213, \"3g.20gb\": 0.0753, \"4g.20gb\": 0.0686, \"7g.40gb\": 0.0472}\n"
      "bert_train4 {\"2g.10gb\": 0.2166, \"3g.20gb\": 0.1267, \"4g.20gb\": 0.1145, \"7g.40gb\": 0.0704}\n"
      "embedding_train128 {\"1g.5gb\": 0.0072, \"2g.10gb\": 0.0047, \"3g.20gb\": 0.0036, \"4g.20gb\": 0.0035, "
      "\"7g.40gb\": 0.0032}\n"
      "embedding_train64 {\"1g.5gb\": 0.0049, \"2g.10gb\": 0.0037, \"3g.20gb\": 0.0032, \"4g.20gb\": 0.0032, "
      "\"7g.40gb\": 0.003}\n",
      "sweep table")});
}

SimResult run_mig_auto(const std::vector<SimJob>& jobs, const std::string& cluster, const std::string& policy,
              const ThroughputModel& model, bool migrate, double min_interval_s = 600) {
  SimOptions options;
  options.policy = policy;
  options.migrate = migrate;
  options.min_interval_s = min_interval_s;
  return simulate(jobs, build_cluster(parse_cluster_spec(cluster)), model, options);
}

// Over seeds 1-6 of `trials`-trial sweeps on `gpus` mig=auto H200s with moves, as `set` configures them: the
// mean makespan over the work bound and the mean average JCT.
std::pair<double, double> sweep_means(int trials, int gpus, const ThroughputModel& model,
                                      const std::function<void(SimOptions&)>& set) {
  double makespan = 0, jct = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const auto jobs = generate_sweep(trials, model, seed);
    SimOptions options;
    options.migrate = true;
    set(options);
    const auto cluster = build_cluster(parse_cluster_spec(std::to_string(gpus) + "xH200:mig=auto"));
    const auto r = simulate(jobs, cluster, model, options);
    makespan += r.metrics.makespan / work_bound_s(jobs, gpus, model) / 6;
    jct += r.metrics.avg_jct / 6;
  }
  return {makespan, jct};
}

TEST(MigAuto, ARetrieverSweepRunsTwiceAsFastAsOnWholeGpusAndNearTheWorkBound) {
  const auto model = sweep_model();
  const auto jobs = generate_sweep(60, model, 1);
  const double bound = work_bound_s(jobs, 2, model);
  for (const std::string policy : {"fifo", "las"}) {
    const auto whole = run_mig_auto(jobs, "2xH200", policy, model, false);
    const auto packed = run_mig_auto(jobs, "2xH200:mig=auto", policy, model, false);
    const auto moved = run_mig_auto(jobs, "2xH200:mig=auto", policy, model, true);
    EXPECT_LT(packed.metrics.avg_jct, whole.metrics.avg_jct) << policy;
    EXPECT_LT(2 * moved.metrics.avg_jct, whole.metrics.avg_jct) << policy;
    EXPECT_GT(moved.migrations, 0) << policy;
    // Moving jobs off small slices when the queue empties cuts the tail that packing alone leaves.
    EXPECT_LT(moved.metrics.makespan, packed.metrics.makespan) << policy;
    EXPECT_LT(moved.metrics.makespan, 1.25 * bound) << policy;
  }
}

// The plan's efficiency weight (exec::RebalanceOptions::efficiency_weight): at 0 it maximises summed speed,
// and a sweep's base retrievers, which gain little from packing, wait behind embedding jobs that gain a lot,
// then end late on slices or whole GPUs; weighted by efficiency they start sooner on the slice sizes that suit
// them, and the sweep ends nearer the work bound at some cost in average JCT. Over seeds 1-6 of 48 trials on
// 2xH200 with moves (without the rule for a batch's end, which also shortens the tail): makespan 1.11x the
// bound on average at 0, 1.08x at 0.25 (the default), 1.07x at 1; average JCT 12,019, 12,882, 13,556 s.
TEST(MigAuto, TheEfficiencyWeightTradesAverageJctForMakespan) {
  const auto model = sweep_model();
  const auto run = [&](double weight) {
    return sweep_means(48, 2, model, [&](SimOptions& options) {
      options.efficiency_weight = weight;
      options.drain_after_s = -1;  // the weight alone (the rule for a batch's end is tested below)
    });
  };
  const auto [speed_makespan, speed_jct] = run(0);
  const auto [default_makespan, default_jct] = run(exec::RebalanceOptions{}.efficiency_weight);
  const auto [efficiency_makespan, efficiency_jct] = run(1);
  EXPECT_LT(default_makespan, speed_makespan - 0.02);
  EXPECT_LT(efficiency_makespan, speed_makespan - 0.02);
  EXPECT_LT(speed_jct, default_jct);
  EXPECT_LT(default_jct, efficiency_jct);
  EXPECT_LT(default_makespan, 1.10);
}

// A batch's end (exec::RebalanceOptions::drain_after_s): once nothing is queued or arriving, a job that would
// end past the work left at its most efficient slice size counts more, so that the long jobs take the larger
// slices. Over seeds 1-6 of 100 trials on 4xH200 with moves: mean makespan 1.095x the bound without, 1.074x
// with, average JCT +0.6 %.
TEST(MigAuto, AtABatchsEndTheJobsThatWouldEndLastTakeTheLargerSlices) {
  const auto model = sweep_model();
  const auto run = [&](double drain_after_s) {
    return sweep_means(100, 4, model, [&](SimOptions& options) { options.drain_after_s = drain_after_s; });
  };
  const auto [off_makespan, off_jct] = run(-1);
  const auto [on_makespan, on_jct] = run(exec::RebalanceOptions{}.drain_after_s);
  EXPECT_LT(on_makespan, off_makespan - 0.01);
  EXPECT_LT(on_jct, 1.02 * off_jct);
}

// Longest job first (policy ljf, Graham's LPT): a sweep submitted at once ends nearest its work bound when its long
// trials start first and the short ones fill in around them. Over seeds 1-6 of 100 trials on 4xH200 with moves:
// makespan 1.030-1.051x the bound (mean 1.041x) under ljf+dynbatch, 1.053-1.094x (mean 1.074x) under
// fifo+dynbatch; average JCT 2.07-2.74x lower than whole GPUs under ljf.
TEST(MigAuto, LongestJobFirstEndsASweepNearestItsWorkBound) {
  const auto model = sweep_model();
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const auto jobs = generate_sweep(100, model, seed);
    const double bound = work_bound_s(jobs, 4, model);
    const auto fifo = run_mig_auto(jobs, "4xH200:mig=auto", "fifo+dynbatch", model, true, -1);
    const auto ljf = run_mig_auto(jobs, "4xH200:mig=auto", "ljf+dynbatch", model, true, -1);
    const auto whole = run_mig_auto(jobs, "4xH200", "ljf+dynbatch", model, false);
    EXPECT_LT(ljf.metrics.makespan, 1.06 * bound) << "seed " << seed;
    EXPECT_LT(ljf.metrics.makespan, fifo.metrics.makespan) << "seed " << seed;
    EXPECT_LT(2 * ljf.metrics.avg_jct, whole.metrics.avg_jct) << "seed " << seed;
  }
}

TEST(MigAuto, NoWorseThanWholeGpusWhenPackingGainsNothing) {
  // No table: speed proportional to compute slices, so no layout does more work than the whole GPU.
  const ThroughputModel linear;
  std::vector<SimJob> jobs;
  for (int i = 0; i < 30; ++i) {
    SimJob j;
    j.name = "j" + std::to_string(i);
    j.arrival = 200.0 * i;
    j.iterations = 600 + 97 * (i % 11);
    j.estimate_s = j.iterations;
    j.need = sched::parse_need("10gb:1");
    jobs.push_back(j);
  }
  for (bool migrate : {false, true}) {
    const auto whole = run_mig_auto(jobs, "2xH200", "fifo", linear, false);
    const auto automatic = run_mig_auto(jobs, "2xH200:mig=auto", "fifo", linear, migrate);
    EXPECT_LE(automatic.metrics.avg_jct, 1.02 * whole.metrics.avg_jct) << migrate;
    EXPECT_LE(automatic.metrics.makespan, 1.02 * whole.metrics.makespan) << migrate;
  }
}

// Light load: a few of MISO's jobs (one to three minutes each) on few GPUs, with moves at ragmig's cost (34 s)
// and without. With moves, jobs were moved seconds before their end, started on a free slice of a GPU left in
// slices (or beside running jobs) while whole GPUs sat idle, and packed onto slices when a GPU was about to
// free: up to 1.56x whole GPUs' average JCT (bench_sim --mig, part (d)). Without moves, a GPU left in slices
// after a burst gave later arrivals a slice for good (up to 1.07x). Now 0.84-0.98 (mean 0.93 without moves,
// 0.92 with), within the 2 %.
TEST(MigAuto, LightLoadStaysNearWholeGpus) {
  RAGMIG_REQUIRE_DATA("traces/miso-a100-mig-iteration-seconds.txt");
  const auto model = make_throughput_model(
      {read_throughput_table((testing::data_dir() / "traces/miso-a100-mig-iteration-seconds.txt").string())});
  for (const bool migrate : {false, true}) {
    double sum = 0;
    int runs = 0;
    for (const auto& [workload, gpus] : std::vector<std::pair<std::string, std::string>>{{"miso:20", "2xA100-40GB"},
                                                                                          {"miso:60", "4xA100-40GB"}}) {
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        const auto jobs =
            load_workload(parse_workload_spec(workload), build_cluster(parse_cluster_spec(gpus)), model, seed).jobs;
        const auto whole = run_mig_auto(jobs, gpus, "fifo", model, false);
        const auto automatic = run_mig_auto(jobs, gpus + ":mig=auto", "fifo", model, migrate, -1);  // default cool-down
        const double ratio = automatic.metrics.avg_jct / whole.metrics.avg_jct;
        EXPECT_LE(ratio, 1.02) << workload << " on " << gpus << ", seed " << seed << (migrate ? ", moves" : "");
        sum += ratio;
        ++runs;
      }
    }
    EXPECT_LE(sum / runs, 0.95) << migrate;  // with moves 1.22 at first, then 1.003, then 0.97
  }
}

// A sweep submitted at once onto more GPUs than it keeps busy for long: without moves, packing every trial onto
// slices at once kept the long ones on small slices long after the short ones ended (here 20 trials on
// 8xH200, seed 2: 1.33x whole GPUs' average JCT). Jobs planned in the same pass count for the waiting rule,
// and new jobs take an idle whole GPU before a slice left over beside running jobs (0.79-1.05x); each job the
// plan places has its instance reserved, and the ones it leaves waiting take no slice meanwhile (the ordering
// policy gave the slices made for short trials to the long trials meant to wait: 16 on 8xA100-40GB, 1.06x).
TEST(MigAuto, ASweepSubmittedAtOnceStaysNearWholeGpusWithoutMoves) {
  const auto model = sweep_model();
  double sum = 0;
  int runs = 0;
  for (const auto& [trials, gpus] :
       std::vector<std::pair<int, std::string>>{{20, "8xH200"}, {12, "4xH200"}, {16, "8xA100-40GB"}}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const auto jobs = generate_sweep(trials, model, seed);
      const auto whole = run_mig_auto(jobs, gpus, "fifo", model, false);
      const auto packed = run_mig_auto(jobs, gpus + ":mig=auto", "fifo", model, false);
      const double ratio = packed.metrics.avg_jct / whole.metrics.avg_jct;
      EXPECT_LE(ratio, 1.02) << trials << " trials on " << gpus << ", seed " << seed;  // 1.33 at first
      sum += ratio;
      ++runs;
    }
  }
  EXPECT_LE(sum / runs, 0.90);  // 1.02 at first, then 0.92; now 0.73-0.97, mean 0.83
}

// The same on ragmig's own job types at the speeds measured per slice on an H200 (bench/mig/slice_speed.sh), where
// a BERT-base trial at batch 256 runs 4.75x slower on its 1g than whole: a trial planned on a share of a GPU must
// keep it when later trials join that GPU (sweep:10 on 2xH200, seed 1, was 1.03x: two trials planned after it
// squeezed it onto the 1g, 28,800 s for 6,100 s of work).
TEST(MigAuto, OnRagmigsH200SpeedsASweepStaysNearWholeGpusWithoutMoves) {
  const auto model = make_throughput_model(
      {read_throughput_table(std::string(RAGMIG_SOURCE_DIR) + "/bench/mig/ragmig-slices-h200.txt")});
  ASSERT_TRUE(sweep_draws_ragmig_types(model));
  for (const auto& [trials, gpus] :
       std::vector<std::pair<int, std::string>>{{6, "1xH200"}, {10, "2xH200"}, {12, "4xH200"}, {20, "8xH200"}}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const auto jobs = generate_sweep(trials, model, seed);
      const auto whole = run_mig_auto(jobs, gpus, "fifo", model, false);
      const auto packed = run_mig_auto(jobs, gpus + ":mig=auto", "fifo", model, false);
      EXPECT_LE(packed.metrics.avg_jct / whole.metrics.avg_jct, 1.02) << trials << " trials on " << gpus << ", seed "
                                                                     << seed;
    }
  }
}

// The jobs a plan leaves waiting take no instance of a mig=auto GPU until a plan gives them one: on clusters
// that mix such GPUs with whole and hand-laid ones, under an ordering policy that preempts and with dynamic
// batch, with moves and without, every job still ends (the simulator throws when jobs wait on an idle
// cluster). With moves, the average JCT is within 2 % of the same cluster with the mig=auto GPU whole (the
// issue's bound; 0.64-0.97x under fifo and las+dynbatch). Without moves that is not asserted, and not true of
// one run: 1.09x for the A100 beside a static 3g+2g+2g one under las+dynbatch, seed 1 — LAS's preemption puts a
// long trial on the static 2g, and without moves it stays there after the mig=auto GPU frees (0.99x before the
// rule that keeps a job off a slice where waiting for a GPU would end it sooner, which took three other runs
// here from 1.06-1.14x to 0.69-0.79x; all others are at most 0.93x).
TEST(MigAuto, EveryJobEndsOnMixedClustersUnderAnyPolicy) {
  const auto model = sweep_model();
  for (const std::string cluster : {"1xH200:mig=auto,1xH200",
                                    "1xA100-40GB:mig=auto,1xA100-40GB:mig=3g.20gb+2g.10gb+2g.10gb",
                                    "2xA100-40GB:mig=auto"}) {
    for (const std::string policy : {"fifo", "ljf+dynbatch", "las(thresholds=600:3600,min_run=0)+dynbatch"}) {
      for (const bool migrate : {false, true}) {
        for (uint64_t seed = 1; seed <= 2; ++seed) {
          const auto jobs = generate_sweep(10, model, seed);
          const auto r = run_mig_auto(jobs, cluster, policy, model, migrate, -1);
          EXPECT_EQ(r.metrics.jobs, jobs.size())
              << cluster << ", " << policy << ", seed " << seed << (migrate ? ", moves" : "");
          EXPECT_EQ(r.unplaceable, 0u);
          if (!migrate) continue;
          std::string whole = cluster;
          whole.replace(whole.find(":mig=auto"), 9, "");
          EXPECT_LE(r.metrics.avg_jct, 1.02 * run_mig_auto(jobs, whole, policy, model, false).metrics.avg_jct)
              << cluster << ", " << policy << ", seed " << seed;
        }
      }
    }
  }
}

TEST(MigAuto, AnAlternatingQueueDoesNotMakeItThrash) {
  // Small and BERT-sized jobs arrive in turn every 5 minutes: each arrival changes what the best layout is.
  const auto model = sweep_model();
  std::vector<SimJob> jobs;
  for (int i = 0; i < 40; ++i) {
    SimJob j;
    j.name = "j" + std::to_string(i);
    j.arrival = 300.0 * i;
    j.type = i % 2 ? "bert_train4" : "embedding_train64";
    j.iterations = std::round(1800 / seconds_per_iteration(model, j.type, {sched::SlotKind::Mig, "", 7}));
    j.estimate_s = 1800;
    j.need = sched::parse_need(i % 2 ? "10gb:1" : "5gb:1");
    jobs.push_back(j);
  }
  SimOptions options;
  options.migrate = true;
  options.min_interval_s = 900;
  options.keep_timeline = true;
  const auto r = simulate(jobs, build_cluster(parse_cluster_spec("1xH200:mig=auto")), model, options);
  // Moves (attempts that ended preempted) come in batches at least one cool-down apart while jobs arrive;
  // after the last arrival, once nobody is queued, only ends change the jobs: at most a batch per end.
  std::vector<double> moves, ends;
  for (const auto& o : r.timeline) {
    if (o.outcome == "preempted") moves.push_back(o.end);
    if (o.outcome == "done") ends.push_back(o.end);
  }
  std::sort(moves.begin(), moves.end());
  ASSERT_FALSE(moves.empty());
  const double last_arrival = jobs.back().arrival;
  size_t batches_after = 0;
  for (size_t i = 1; i < moves.size(); ++i) {
    if (moves[i] <= moves[i - 1] + 1e-6) continue;
    if (moves[i] <= last_arrival) {
      EXPECT_GE(moves[i] - moves[i - 1], 900 - 1e-6) << "moves at " << moves[i - 1] << " and " << moves[i];
    } else {
      ++batches_after;
    }
  }
  EXPECT_LE(batches_after, static_cast<size_t>(std::count_if(ends.begin(), ends.end(), [&](double e) {
              return e > last_arrival;
            })));
  const auto whole = run_mig_auto(jobs, "1xH200", "fifo", model, false);
  EXPECT_LT(r.metrics.avg_jct, whole.metrics.avg_jct);
}

// Random runs: clusters of mig=auto GPUs alone and beside whole and hand-laid ones, arrivals spread or at once,
// ordering policies with and without preemption and dynamic batch, with and without moves. In every one each job
// ends exactly once, its attempts never overlap, the instances in use on a GPU at any moment form a valid
// layout (a whole GPU's slot alone), nothing moves without --migrate, and no run beats the work bound.
TEST(MigAuto, RandomRunsKeepInstancesApartAndEndEveryJobOnce) {
  const auto model = sweep_model();
  const std::vector<std::string> clusters{"1xH200:mig=auto",
                                          "2xH200:mig=auto",
                                          "3xA100-40GB:mig=auto",
                                          "1xH200:mig=auto,1xH200",
                                          "1xA100-40GB:mig=auto,1xA100-40GB:mig=3g.20gb+2g.10gb+2g.10gb"};
  const std::vector<std::string> policies{"fifo", "srtf", "ljf", "las(thresholds=600:3600,min_run=0)",
                                          "fifo+dynbatch", "las(thresholds=600:3600,min_run=0)+dynbatch"};
  std::mt19937 rng(7);
  const auto pick = [&](auto n) { return static_cast<decltype(n)>(rng() % static_cast<uint64_t>(n)); };
  int64_t moves = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const std::string spec = clusters[pick(clusters.size())];
    const Cluster cluster = build_cluster(parse_cluster_spec(spec));
    auto jobs = generate_sweep(4 + pick(20), model, 1 + pick(1000));
    if (pick(2)) {
      for (auto& j : jobs) j.arrival = static_cast<double>(pick(20000));
      std::stable_sort(jobs.begin(), jobs.end(),
                       [](const SimJob& a, const SimJob& b) { return a.arrival < b.arrival; });
    }
    SimOptions options;
    options.policy = policies[pick(policies.size())];
    options.migrate = pick(2);
    options.min_interval_s = std::vector<double>{-1, 0, 300}[pick(3)];
    options.drain_after_s = std::vector<double>{-1, 0, 1000}[pick(3)];
    options.keep_timeline = true;
    const std::string what = spec + ", " + options.policy + (options.migrate ? ", moves" : "") + ", trial " +
                             std::to_string(trial);
    const auto r = simulate(jobs, cluster, model, options);
    ASSERT_EQ(r.unplaceable, 0u) << what;
    EXPECT_EQ(r.metrics.jobs, jobs.size()) << what;
    EXPECT_GE(r.metrics.makespan, work_bound_s(jobs, static_cast<int>(cluster.gpus.size()), model) - 1e-6) << what;
    if (!options.migrate) {
      EXPECT_EQ(r.migrations, 0) << what;
    }
    moves += r.migrations;

    std::map<sched::JobId, std::vector<const Occupancy*>> attempts;
    std::map<std::string, std::vector<const Occupancy*>> on_gpu;  // "gpu<i>" -> its attempts
    for (const auto& o : r.timeline) {
      if (o.job == 0 || o.end <= o.start) continue;  // re-partitions; attempts stopped as they started
      attempts[o.job].push_back(&o);
      on_gpu[o.slot.substr(0, o.slot.find('/'))].push_back(&o);
    }
    EXPECT_EQ(attempts.size(), jobs.size()) << what;
    for (auto& [job, list] : attempts) {
      std::sort(list.begin(), list.end(), [](const Occupancy* a, const Occupancy* b) { return a->start < b->start; });
      EXPECT_EQ(std::count_if(list.begin(), list.end(), [](const Occupancy* o) { return o->outcome == "done"; }), 1)
          << "job " << job << ", " << what;
      EXPECT_EQ(list.back()->outcome, "done") << "job " << job << ", " << what;
      for (size_t i = 1; i < list.size(); ++i)
        EXPECT_LE(list[i - 1]->end, list[i]->start + 1e-9) << "job " << job << ", " << what;
    }
    for (const auto& [name, list] : on_gpu) {
      const SimGpu& gpu = cluster.gpus[static_cast<size_t>(std::stoi(name.substr(3)))];
      for (const Occupancy* at : list) {  // the instances in use when each attempt starts
        gpu::Layout in_use;
        int whole = 0;
        for (const Occupancy* o : list) {
          if (o->start > at->start || o->end <= at->start) continue;
          if (o->slot.find('/') == std::string::npos) {
            ++whole;
          } else {
            in_use.push_back(gpu::parse_placement(*gpu.catalog, o->slot.substr(o->slot.find('/') + 1)));
          }
        }
        EXPECT_TRUE(whole == 0 || (whole == 1 && in_use.empty())) << name << " at " << at->start << ", " << what;
        EXPECT_TRUE(gpu::is_valid_layout(*gpu.catalog, in_use))
            << name << " at " << at->start << ": " << gpu::layout_error(*gpu.catalog, in_use) << ", " << what;
      }
    }
  }
  EXPECT_GT(moves, 20);  // the runs exercise moves
}

}  // namespace
}  // namespace ragmig::sim
