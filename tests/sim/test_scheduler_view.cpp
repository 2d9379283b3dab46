// The scheduler keeps its jobs and its policy view up to date incrementally (records updated in place after
// each transition, view entries only for the jobs that changed); driven here by the simulator through
// arrivals, preemptions, requeues, re-partitions and moves, the view must equal the one rebuilt from scratch, and
// agree with the store, at every pass.
#include <gtest/gtest.h>

#include <filesystem>

#include "sched/scheduler.h"
#include "sched/store.h"
#include "core/error.h"
#include "sim/memory_jobs.h"
#include "sim/mig_partitioner.h"
#include "sim/sim_clock.h"
#include "sim/sim_executor.h"
#include "sim/sweep.h"

namespace ragmig::sim {
namespace {

void expect_same(const sched::ClusterView& a, const sched::ClusterView& b, double now) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size()) << "at " << now;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const auto &x = a.jobs[i], &y = b.jobs[i];
    EXPECT_EQ(x.id, y.id) << "at " << now;
    EXPECT_EQ(x.slots, y.slots) << "job " << x.id << " at " << now;
    EXPECT_EQ(x.stopping, y.stopping) << "job " << x.id << " at " << now;
    EXPECT_EQ(x.need.what, y.need.what);
    EXPECT_EQ(x.priority, y.priority);
    EXPECT_DOUBLE_EQ(x.waited_s(now), y.waited_s(now)) << "job " << x.id << " at " << now;
    EXPECT_DOUBLE_EQ(x.queued_since, y.queued_since) << "job " << x.id << " at " << now;
    EXPECT_DOUBLE_EQ(x.service_s(now), y.service_s(now)) << "job " << x.id << " at " << now;
    EXPECT_DOUBLE_EQ(x.work_s(now), y.work_s(now)) << "job " << x.id << " at " << now;
    EXPECT_DOUBLE_EQ(x.started_at, y.started_at) << "job " << x.id << " at " << now;
  }
  EXPECT_EQ(a.slot_order, b.slot_order);
  EXPECT_EQ(a.reserved, b.reserved);
}

// Arrivals, preemptions, requeues, re-partitions and moves under `policy`, checking the view at every pass;
// returns every job's row at the end.
std::vector<sched::JobRecord> run_checked(sched::JobTable& store, const std::string& policy) {
  SimClock clock;
  const ThroughputModel model;
  SimExecutor executor(model, {5, 10, 2}, clock, false);
  exec::RebalanceOptions moves;
  moves.migrate = true;
  moves.min_interval_s = 300;
  MigPartitioner parts(build_cluster(parse_cluster_spec("2xH200:mig=auto,1xH200:mig=3g.71gb+4x1g.18gb")),
                       [](const sched::JobView& j) { return exec::power_law_speeds(j.id % 2 ? 0.3 : 0.9); }, moves);
  sched::SchedulerOptions options;
  options.policy = policy;
  sched::Scheduler scheduler(store, executor, clock, parts.slots(), options);
  auto jobs = generate_sweep(40, model, 3);
  const std::vector<std::string> needs = {"10gb:1", "20gb:1", "1g.18gb:2", "3g.71gb:1", "gpu:1"};
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].arrival = 50.0 * static_cast<double>(i % 13);
    jobs[i].need = sched::parse_need(needs[i % needs.size()]);
    jobs[i].iterations /= 20;
  }
  sort_by_arrival(jobs);
  size_t next = 0, passes = 0;
  while (passes < 20000) {
    const double now = clock.now();
    for (; next < jobs.size() && jobs[next].arrival <= now; ++next) {
      sched::JobSpec spec;
      spec.name = jobs[next].name;
      spec.argv = {"sim"};
      spec.need = jobs[next].need;
      spec.priority = jobs[next].priority;
      spec.estimate_s = jobs[next].iterations;
      executor.add_job(scheduler.submit(spec), jobs[next].type, jobs[next].iterations);
    }
    scheduler.step();
    ++passes;
    const auto actions = parts.update(scheduler.cluster_view(), now);
    for (sched::JobId id : actions.stop) scheduler.migrate(id, "to a better layout");
    if (actions.slots_changed) scheduler.set_slots(parts.slots(), parts.awaiting());
    // The view as kept, then as rebuilt from scratch (handing the same slots back forces a rebuild).
    const sched::ClusterView kept = scheduler.cluster_view();
    // The records it is built from, updated in place after each transition, agree with the store.
    for (const auto& j : kept.jobs) {
      const auto row = store.job(j.id);
      if (!row) {
        ADD_FAILURE() << "job " << j.id << " is not in the table";
        return {};
      }
      EXPECT_EQ(row->state == sched::JobState::Running, j.running()) << "job " << j.id << " at " << now;
      if (j.running()) {
        EXPECT_DOUBLE_EQ(j.started_at, row->started_at) << "job " << j.id << " at " << now;
        EXPECT_DOUBLE_EQ(j.waited_s(now), row->waited_s) << "job " << j.id << " at " << now;
        EXPECT_DOUBLE_EQ(j.service_s(now), row->service_s + (now - row->started_at) * j.need.replicas);
        EXPECT_EQ(static_cast<int>(row->slots.size()), j.need.replicas);
      } else {
        EXPECT_DOUBLE_EQ(j.queued_since, row->queued_since) << "job " << j.id << " at " << now;
        EXPECT_DOUBLE_EQ(j.waited_s(now), row->waited_s + (now - row->queued_since)) << "job " << j.id << " at " << now;
        EXPECT_DOUBLE_EQ(j.service_s(now), row->service_s);
      }
    }
    scheduler.set_slots(std::vector<sched::Slot>(scheduler.slots()), parts.awaiting());
    expect_same(kept, scheduler.cluster_view(), now);
    if (::testing::Test::HasFailure()) return {};

    double wake = std::min(next < jobs.size() ? jobs[next].arrival : 1e300, executor.next_event_time(now));
    wake = std::min(wake, parts.next_event());
    if (scheduler.queued_jobs() > 0) wake = std::min(wake, now + 60);
    if (actions.slots_changed) wake = now;
    if (wake >= 1e300 || (scheduler.active_jobs() == 0 && next == jobs.size())) break;
    clock.wait_until(wake);
  }
  EXPECT_EQ(scheduler.active_jobs(), 0u) << policy;
  EXPECT_GT(executor.preemptions(), 0) << policy;
  EXPECT_GT(parts.migrations(), 0) << policy;
  return store.jobs(/*active_only=*/false);
}

const char* const kPolicies[] = {"priority(preempt=1,min_run=120)", "las(thresholds=600:6000,min_run=30)", "srtf"};

TEST(SchedulerView, IncrementalViewEqualsRebuiltView) {
  for (const std::string policy : kPolicies) {
    const auto store = sched::Store::in_memory((std::filesystem::temp_directory_path() / "ragmig-view-test").string());
    run_checked(*store, policy);
  }
}

// The simulator's table in memory and the SQLite store, driven through the same run, end with the same rows:
// states, times, attempts, failures, reasons.
TEST(SchedulerView, TheSimulatorsTableKeepsTheStoresRows) {
  for (const std::string policy : kPolicies) {
    const std::string root = (std::filesystem::temp_directory_path() / "ragmig-table-test").string();
    const auto sqlite = sched::Store::in_memory(root);
    MemoryJobs memory(root);
    const auto want = run_checked(*sqlite, policy), got = run_checked(memory, policy);
    ASSERT_EQ(got.size(), want.size()) << policy;
    ASSERT_GT(want.size(), 30u);
    int64_t requeued = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const auto &w = want[i], &g = got[i];
      EXPECT_EQ(g.id, w.id);
      EXPECT_EQ(g.spec.name, w.spec.name);
      EXPECT_EQ(g.state, w.state) << "job " << w.id << " " << policy;
      EXPECT_EQ(g.submitted_at, w.submitted_at) << "job " << w.id;
      EXPECT_EQ(g.finished_at, w.finished_at) << "job " << w.id;
      EXPECT_EQ(g.queued_since, w.queued_since) << "job " << w.id;
      EXPECT_EQ(g.waited_s, w.waited_s) << "job " << w.id;
      EXPECT_EQ(g.service_s, w.service_s) << "job " << w.id;
      EXPECT_EQ(g.work_s, w.work_s) << "job " << w.id;
      EXPECT_EQ(g.not_before, w.not_before) << "job " << w.id;
      EXPECT_EQ(g.attempts, w.attempts) << "job " << w.id;
      EXPECT_EQ(g.failures, w.failures) << "job " << w.id;
      EXPECT_EQ(g.reason, w.reason) << "job " << w.id;
      EXPECT_EQ(g.step, w.step) << "job " << w.id;
      EXPECT_EQ(g.checkpoint_step, w.checkpoint_step) << "job " << w.id;
      EXPECT_EQ(g.events_offset, w.events_offset) << "job " << w.id;
      EXPECT_EQ(g.attempt_id, w.attempt_id) << "job " << w.id;
      EXPECT_EQ(g.slots, w.slots) << "job " << w.id;
      requeued += w.attempts > 1;
    }
    EXPECT_GT(requeued, 0) << policy;  // the run moved and preempted jobs: rows went through requeues
    EXPECT_EQ(memory.job_times().size(), sqlite->job_times().size());
    EXPECT_TRUE(memory.open_attempts().empty());
  }
}

// Cancels, unknown ids and a second report of one exit, as the store answers them.
TEST(SchedulerView, TheSimulatorsTableAnswersAsTheStoreDoes) {
  const auto sqlite = sched::Store::in_memory("/nonexistent-run-root");
  MemoryJobs memory("/nonexistent-run-root");
  for (sched::JobTable* t : std::initializer_list<sched::JobTable*>{sqlite.get(), &memory}) {
    sched::JobSpec spec;
    spec.name = "a";
    spec.argv = {"sim"};
    const sched::JobId a = t->submit(spec, 1), b = t->submit(spec, 1), c = t->submit(spec, 1);
    EXPECT_EQ(t->run_dir(a), "/nonexistent-run-root/runs/1");
    const auto attempt = t->start_attempt(a, {"cpu:0"}, 3);
    ASSERT_TRUE(attempt);
    EXPECT_FALSE(t->start_attempt(a, {"cpu:1"}, 3));  // running already
    ASSERT_EQ(t->open_attempts().size(), 1u);
    EXPECT_EQ(t->open_attempts()[0].slots, std::vector<std::string>{"cpu:0"});
    EXPECT_EQ(t->request_cancel(a, 4), sched::CancelResult::Stopping);
    EXPECT_TRUE(t->job(a)->cancel_requested);
    EXPECT_EQ(t->request_cancel(b, 4), sched::CancelResult::Cancelled);
    EXPECT_EQ(t->job(b)->reason, "cancelled by user");
    EXPECT_EQ(t->request_cancel(b, 5), sched::CancelResult::AlreadyFinished);
    EXPECT_THROW(t->request_cancel(99, 5), DataError);
    EXPECT_FALSE(t->job(99));
    sched::AttemptEnd end;
    end.outcome = "cancelled";
    end.next = sched::JobState::Cancelled;
    end.reason = "cancelled by user";
    end.service_s = 2;
    EXPECT_TRUE(t->finish_attempt(a, *attempt, end, 5));
    EXPECT_FALSE(t->finish_attempt(a, *attempt, end, 6));  // a second report changes nothing
    EXPECT_EQ(t->job(a)->finished_at, 5);
    EXPECT_FALSE(t->job(a)->cancel_requested);
    t->set_reason(a, "not queued: left alone");
    t->set_reason(c, "unrunnable: no slot");
    EXPECT_EQ(t->job(a)->reason, "cancelled by user");
    EXPECT_EQ(t->job(c)->reason, "unrunnable: no slot");
    EXPECT_EQ(t->jobs(/*active_only=*/true).size(), 1u);
    spec.argv.clear();
    EXPECT_THROW(t->submit(spec, 7), ConfigError);
  }
}

// Scheduler::cancel (a sweep stopping a trial early from inside the scheduler's process): a queued job is
// cancelled at once, a running one is stopped and ends cancelled, its slot goes to the next job, and the
// view stays what a rebuild gives.
TEST(SchedulerView, CancelFromInsideTheProcess) {
  SimClock clock;
  const auto store = sched::Store::in_memory((std::filesystem::temp_directory_path() / "ragmig-cancel-test").string());
  const ThroughputModel model;
  SimExecutor executor(model, {5, 10, 2}, clock, false);
  sched::Scheduler scheduler(*store, executor, clock, cluster_slots(build_cluster(parse_cluster_spec("1xH200"))),
                             sched::SchedulerOptions{});
  std::vector<sched::JobId> ids;
  for (int i = 0; i < 3; ++i) {
    sched::JobSpec spec;
    spec.name = "j" + std::to_string(i);
    spec.argv = {"sim"};
    spec.need = sched::parse_need("gpu:1");
    ids.push_back(scheduler.submit(spec));
    executor.add_job(ids.back(), "resnet50", 1000);
  }
  scheduler.step();
  ASSERT_EQ(store->job(ids[0])->state, sched::JobState::Running);
  scheduler.cancel(ids[2], "not needed");
  EXPECT_EQ(store->job(ids[2])->state, sched::JobState::Cancelled);
  scheduler.cancel(ids[0], "stopped early");
  for (int pass = 0; pass < 50 && store->job(ids[0])->state == sched::JobState::Running; ++pass) {
    clock.wait_until(executor.next_event_time(clock.now()));
    scheduler.step();
  }
  EXPECT_EQ(store->job(ids[0])->state, sched::JobState::Cancelled);
  for (int pass = 0; pass < 5 && store->job(ids[1])->state != sched::JobState::Running; ++pass) scheduler.step();
  EXPECT_EQ(store->job(ids[1])->state, sched::JobState::Running);
  const auto transitions = store->transitions(ids[0]);
  EXPECT_TRUE(std::any_of(transitions.begin(), transitions.end(),
                          [](const auto& t) { return t.reason.find("stopped early") != std::string::npos; }));
  scheduler.cancel(ids[0], "again");  // finished: left alone
  EXPECT_EQ(store->job(ids[0])->state, sched::JobState::Cancelled);
}

// What set_before_decide's hook submits counts in the same pass's decision: the job submitted when another
// ends takes the slot it freed, ahead of a job that waited longer at a lower priority.
TEST(SchedulerView, WhatIsSubmittedBeforeTheDecisionIsPlacedInTheSamePass) {
  for (const bool hooked : {true, false}) {
    SimClock clock;
    const auto store = sched::Store::in_memory((std::filesystem::temp_directory_path() / "ragmig-hook-test").string());
    const ThroughputModel model;
    SimExecutor executor(model, {5, 10, 2}, clock, false);
    sched::SchedulerOptions options;
    options.policy = "priority";
    sched::Scheduler scheduler(*store, executor, clock, cluster_slots(build_cluster(parse_cluster_spec("1xH200"))),
                               options);
    const auto submit = [&](const std::string& name, int64_t priority) {
      sched::JobSpec spec;
      spec.name = name;
      spec.argv = {"sim"};
      spec.need = sched::parse_need("gpu:1");
      spec.priority = priority;
      const sched::JobId id = scheduler.submit(spec);
      executor.add_job(id, "resnet50", 1000);
      return id;
    };
    const sched::JobId first = submit("training", 0), waiting = submit("next training", 0);
    sched::JobId follow_up = 0;
    const auto follow = [&] {
      if (follow_up == 0 && store->job(first)->state == sched::JobState::Done) follow_up = submit("its evaluation", 1);
    };
    if (hooked) scheduler.set_before_decide(follow);
    scheduler.step();
    ASSERT_EQ(store->job(first)->state, sched::JobState::Running);
    while (store->job(first)->state == sched::JobState::Running) {
      clock.wait_until(executor.next_event_time(clock.now()));
      scheduler.step();
    }
    if (!hooked) follow();  // after the pass, as a caller without the hook would
    ASSERT_NE(follow_up, 0);
    EXPECT_EQ(store->job(follow_up)->state, hooked ? sched::JobState::Running : sched::JobState::Queued) << hooked;
    EXPECT_EQ(store->job(waiting)->state, hooked ? sched::JobState::Queued : sched::JobState::Running) << hooked;
  }
}

// Scheduler::set_estimate (a sweep pricing its trials once it has measured their rate): the next pass ranks by
// the new estimates, in the view, the store and the simulator's table alike.
TEST(SchedulerView, ANewEstimateReordersTheQueueFromTheNextPass) {
  for (const bool in_memory_table : {false, true}) {
    SimClock clock;
    const std::string root = (std::filesystem::temp_directory_path() / "ragmig-estimate-test").string();
    const auto store = sched::Store::in_memory(root);
    MemoryJobs memory(root);
    sched::JobTable& table = in_memory_table ? static_cast<sched::JobTable&>(memory) : *store;
    const ThroughputModel model;
    SimExecutor executor(model, {5, 10, 2}, clock, false);
    sched::SchedulerOptions options;
    options.policy = "ljf";
    sched::Scheduler scheduler(table, executor, clock, cluster_slots(build_cluster(parse_cluster_spec("1xH200"))),
                               options);
    std::vector<sched::JobId> ids;
    for (const double estimate : {3.0, 2.0, 1.0}) {  // priced at a guess: j0 looks longest
      sched::JobSpec spec;
      spec.name = "j" + std::to_string(ids.size());
      spec.argv = {"sim"};
      spec.need = sched::parse_need("gpu:1");
      spec.estimate_s = estimate;
      ids.push_back(scheduler.submit(spec));
      executor.add_job(ids.back(), "resnet50", 1000);
    }
    scheduler.step();
    ASSERT_EQ(table.job(ids[0])->state, sched::JobState::Running);
    // Measured: j2 is the longest of the two that wait, by far.
    scheduler.set_estimate(ids[2], 5000);
    scheduler.set_estimate(ids[1], 100);
    EXPECT_EQ(table.job(ids[2])->spec.estimate_s, 5000);
    const auto entry = [&](sched::JobId id) {
      for (const auto& j : scheduler.cluster_view().jobs)
        if (j.id == id) return j.estimate_s;
      return -1.0;
    };
    EXPECT_EQ(entry(ids[2]), 5000);
    EXPECT_EQ(entry(ids[1]), 100);
    while (table.job(ids[0])->state == sched::JobState::Running) {
      clock.wait_until(executor.next_event_time(clock.now()));
      scheduler.step();
    }
    EXPECT_EQ(table.job(ids[2])->state, sched::JobState::Running) << in_memory_table;
    EXPECT_EQ(table.job(ids[1])->state, sched::JobState::Queued) << in_memory_table;
  }
}

}  // namespace
}  // namespace ragmig::sim
