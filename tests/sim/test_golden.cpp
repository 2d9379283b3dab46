// Golden simulations: small hand-made traces whose JCTs are worked out by hand below each test, under fifo
// and srtf (with and without preemption costs), on MIG slices with a measured table, and with `mig=auto`.
// The simulator has no policy code of its own: every policy of sched's catalog runs, under its own name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "sched/policy.h"
#include "sim/simulation.h"
#include "support/test_support.h"

namespace ragmig::sim {
namespace {

SimJob job(const std::string& name, double arrival, double iterations, const std::string& need = "cpu:1",
           double estimate = 0, const std::string& type = "") {
  SimJob j;
  j.name = name;
  j.arrival = arrival;
  j.iterations = iterations;
  j.need = sched::parse_need(need);
  j.estimate_s = estimate;
  j.type = type;
  return j;
}

SimResult run(const std::vector<SimJob>& jobs, const std::string& cluster, const std::string& policy,
              SimCosts costs = {0, 0, 2}, const ThroughputModel& model = {}) {
  SimOptions options;
  options.policy = policy;
  options.costs = costs;
  options.keep_timeline = true;
  return simulate(jobs, build_cluster(parse_cluster_spec(cluster)), model, options);
}

TEST(Golden, FifoOnTwoSlots) {
  // Unknown types on CPU slots run 1 s per iteration.
  // t=0: a and b start. t=4: b ends, c starts (arrived 1). t=7: c ends, d starts (arrived 2). t=10: a ends.
  // t=12: d ends. JCT a 10, b 4, c 6, d 10: average 7.5; queued c 3, d 5; busy 22 of 2 x 12 slot-seconds.
  const auto r = run({job("a", 0, 10), job("b", 0, 4), job("c", 1, 3), job("d", 2, 5)}, "2xcpu", "fifo");
  EXPECT_EQ(r.policy, "fifo");
  EXPECT_EQ(r.metrics.jobs, 4u);
  EXPECT_DOUBLE_EQ(r.metrics.avg_jct, 7.5);
  EXPECT_DOUBLE_EQ(r.metrics.median_jct, 8);
  EXPECT_DOUBLE_EQ(r.metrics.makespan, 12);
  EXPECT_DOUBLE_EQ(r.metrics.avg_queueing, 2);
  EXPECT_DOUBLE_EQ(r.metrics.utilization, 22.0 / 24.0);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.timeline.size(), 4u);
}

TEST(Golden, WithoutPreemptionTheSimulationGoesFromEventToEvent) {
  // One slot, two jobs of 10,000 s: b waits 10,000 s (JCT a 10,000, b 20,000). A non-preemptive policy starts
  // nothing between events, so the simulator passes at arrivals and exits, not every 60 s tick.
  const std::vector<SimJob> jobs = {job("a", 0, 10000, "cpu:1", 10000), job("b", 0, 10000, "cpu:1", 10000)};
  for (const std::string policy : {"fifo", "priority", "sjf", "ljf"}) {
    const auto r = run(jobs, "1xcpu", policy);
    EXPECT_FALSE(sched::make_policy(policy).preemptive) << policy;
    EXPECT_DOUBLE_EQ(r.metrics.avg_jct, 15000) << policy;
    EXPECT_LT(r.steps, 10u) << policy;
  }
  // A preemptive one passes every tick while b waits: time alone (min_run, attained service) can make a running
  // job a victim. las does preempt a here; priority does not (aging orders the queue, only a higher priority
  // preempts), nor does srtf.
  for (const std::string policy : {"srtf", "las", "priority(preempt=1)", "rr"}) {
    const auto r = run(jobs, "1xcpu", policy);
    EXPECT_TRUE(sched::make_policy(policy).preemptive) << policy;
    EXPECT_GT(r.steps, 10000u / 60) << policy;
    EXPECT_EQ(r.preemptions == 0, policy == "srtf" || policy == "priority(preempt=1)") << policy;
  }
  EXPECT_DOUBLE_EQ(run(jobs, "1xcpu", "srtf").metrics.avg_jct, 15000);
  EXPECT_DOUBLE_EQ(run(jobs, "1xcpu", "priority(preempt=1)").metrics.avg_jct, 15000);
}

TEST(Golden, ProgressIsToldAtEachPassAsAsked) {
  // FifoOnTwoSlots' jobs, told at every pass: arrivals, queue and time as the hand-worked schedule has them.
  const std::vector<SimJob> jobs = {job("a", 0, 10), job("b", 0, 4), job("c", 1, 3), job("d", 2, 5)};
  std::vector<SimProgress> told;
  SimOptions options;
  options.progress_every = 1;
  options.on_progress = [&](const SimProgress& p) { told.push_back(p); };
  const SimResult r = simulate(jobs, build_cluster(parse_cluster_spec("2xcpu")), {}, options);
  ASSERT_EQ(told.size(), r.steps);
  for (size_t i = 0; i < told.size(); ++i) {
    const SimProgress& p = told[i];
    EXPECT_EQ(p.steps, i + 1);
    EXPECT_EQ(p.jobs, 4u);
    EXPECT_LE(p.queued + p.running, p.arrived);
    EXPECT_LE(p.running, 2u);
    EXPECT_GE(p.simulated_s, i > 0 ? told[i - 1].simulated_s : 0);
    EXPECT_EQ(p.arrived, p.simulated_s < 1 ? 2u : p.simulated_s < 2 ? 3u : 4u);
    const double t = p.simulated_s;  // c waits from 1 to 4, d from 2 to 7
    EXPECT_EQ(p.queued, (t >= 1 && t < 4 ? 1u : 0u) + (t >= 2 && t < 7 ? 1u : 0u)) << "at " << t;
  }
  EXPECT_EQ(told.back().arrived, 4u);
  EXPECT_DOUBLE_EQ(told.back().simulated_s, 12);
  EXPECT_EQ(told.back().queued + told.back().running, 0u);
  // Every 3rd pass: a third as many calls.
  options.progress_every = 3;
  told.clear();
  simulate(jobs, build_cluster(parse_cluster_spec("2xcpu")), {}, options);
  EXPECT_EQ(told.size(), r.steps / 3);
}

TEST(Golden, SrtfPreemptsForShorterJobs) {
  // One slot, free preemption. t=0: a (10) runs. t=2: b (3) arrives; a has 8 left: a is stopped at once and
  // b starts. t=3: c (1) arrives; b has 2 left: b is stopped, c runs to t=4. Then b (2 left) runs to t=6 and
  // a (8 left) to t=14. JCT a 14, b 4, c 1: average 19/3.
  const std::vector<SimJob> jobs = {job("a", 0, 10, "cpu:1", 10), job("b", 2, 3, "cpu:1", 3), job("c", 3, 1, "cpu:1", 1)};
  const auto r = run(jobs, "1xcpu", "srtf(min_run=0)");
  EXPECT_DOUBLE_EQ(r.metrics.avg_jct, 19.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.metrics.makespan, 14);
  EXPECT_EQ(r.preemptions, 2);
  // fifo on the same jobs: a to 10, b to 13, c to 14: JCT 10, 11, 11.
  const auto f = run(jobs, "1xcpu", "fifo");
  EXPECT_DOUBLE_EQ(f.metrics.avg_jct, 32.0 / 3.0);
  EXPECT_EQ(f.preemptions, 0);
}

// The same simulation with its jobs in the SQLite store `ragmig run` keeps (bench_sim's reference) works it out
// the same: srtf's preemptions and JCTs above, to the last digit.
TEST(Golden, TheSqliteStoreGivesTheSameSimulation) {
  const std::vector<SimJob> jobs = {job("a", 0, 10, "cpu:1", 10), job("b", 2, 3, "cpu:1", 3), job("c", 3, 1, "cpu:1", 1)};
  testing::ScratchDir dir;
  SimOptions options;
  options.policy = "srtf(min_run=0)";
  options.costs = {0, 0, 2};
  const auto cluster = build_cluster(parse_cluster_spec("1xcpu"));
  const auto memory = simulate(jobs, cluster, {}, options);
  options.sqlite_state_dir = (dir / "state").string();
  const auto sqlite = simulate(jobs, cluster, {}, options);
  EXPECT_TRUE(std::filesystem::exists(dir / "state" / "state.db"));
  EXPECT_DOUBLE_EQ(sqlite.metrics.avg_jct, 19.0 / 3.0);
  EXPECT_DOUBLE_EQ(sqlite.metrics.avg_jct, memory.metrics.avg_jct);
  EXPECT_DOUBLE_EQ(sqlite.metrics.makespan, memory.metrics.makespan);
  EXPECT_EQ(sqlite.preemptions, memory.preemptions);
  EXPECT_EQ(sqlite.steps, memory.steps);
}

TEST(Golden, SrtfWithCheckpointAndRestartCosts) {
  // Checkpoint 1 s, restart 2 s. t=2: b arrives, a (8 left by the scheduler's count) is stopped; it
  // checkpoints its 2 iterations and exits at t=3, when c arrives. c (1) runs 3..4, b (3) runs 4..7. a
  // resumes at 7, pays 2 s of restart and does its 8 remaining iterations: done at 17. JCT 17, 5, 1.
  const std::vector<SimJob> jobs = {job("a", 0, 10, "cpu:1", 10), job("b", 2, 3, "cpu:1", 3), job("c", 3, 1, "cpu:1", 1)};
  const auto r = run(jobs, "1xcpu", "srtf(min_run=0)", {1, 2, 2});
  EXPECT_DOUBLE_EQ(r.metrics.avg_jct, 23.0 / 3.0);
  EXPECT_EQ(r.preemptions, 1);
  // The slot was held the whole 17 s: 3 s by a's first attempt, then 1 + 3 + 10.
  EXPECT_DOUBLE_EQ(r.metrics.utilization, 1.0);
}

TEST(Golden, MigSlicesRunAtTheirMeasuredSpeed) {
  // t needs 10 GB and takes 2 s per iteration on a 1g slice, 1 s on a 3g: placement gives each job the
  // smallest slice that fits. a (10 iterations) on a 1g: 20 s. b (asks for 3g.71gb, 5 iterations): 5 s.
  ThroughputTable table;
  table["t"] = {{"1g.18gb", 2.0}, {"3g.71gb", 1.0}};
  const auto model = make_throughput_model({table});
  const auto r = run({job("a", 0, 10, "10gb:1", 0, "t"), job("b", 0, 5, "3g.71gb:1", 0, "t")},
                     "1xH200:mig=3g.71gb+4x1g.18gb", "fifo", {0, 0, 2}, model);
  EXPECT_DOUBLE_EQ(r.metrics.avg_jct, 12.5);
  // Busy: 20 s x 1 slice + 5 s x 3 slices = 35 of 7 x 20.
  EXPECT_DOUBLE_EQ(r.metrics.utilization, 35.0 / 140.0);
}

TEST(Golden, AutoPartitionsForTheQueue) {
  // An empty H200 and two 10 GB jobs of 3 whole-GPU seconds each (no table: a slice of g compute slices runs
  // at g/7, so packing gains nothing). The rebalancer gives one job the whole GPU: one create step of 2 s, a
  // runs from t=2 to 5, then b on the same instance from 5 to 8. (Packing both on 4g + 3g would end them at
  // 11 and 9.25.)
  const auto r = run({job("a", 0, 3, "10gb:1"), job("b", 0, 3, "10gb:1")}, "1xH200:mig=auto", "fifo");
  EXPECT_EQ(r.repartitions, 1);
  EXPECT_DOUBLE_EQ(r.metrics.avg_jct, (5 + 8) / 2.0);
  int repartition_rows = 0;
  for (const auto& o : r.timeline) repartition_rows += o.outcome == "repartition";
  EXPECT_EQ(repartition_rows, 1);
}

TEST(Golden, JobsThatFitNowhereAreLeftOutAndCounted) {
  const auto r = run({job("a", 0, 3, "gpu:1"), job("b", 0, 3, "10gb:1")}, "1xH200:mig=7x1g.18gb", "fifo");
  EXPECT_EQ(r.unplaceable, 1u);
  EXPECT_EQ(r.metrics.jobs, 1u);
}

TEST(Golden, EveryPolicyOfTheSchedulerRunsUnderItsOwnName) {
  const std::vector<SimJob> jobs = {job("a", 0, 100, "cpu:1", 100), job("b", 5, 10, "cpu:1", 10),
                                    job("c", 6, 30, "cpu:1", 30)};
  for (const auto& info : sched::policy_catalog()) {
    const auto r = run(jobs, "1xcpu", info.name);
    EXPECT_EQ(r.policy, sched::to_string(sched::make_policy(info.name).spec));
    EXPECT_EQ(r.metrics.jobs, 3u) << info.name;
  }
  try {
    run(jobs, "1xcpu", "lottery");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("unknown policy 'lottery'"));  // sched's own message
  }
}

}  // namespace
}  // namespace ragmig::sim
