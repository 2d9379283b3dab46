// The rebalancer's decisions on hand-made views: it packs only jobs that gain from packing, gives a lone
// job the whole GPU by moving it when that pays (and only with migration), keeps still what is about to end
// or moved recently, lets a queued job wait for a GPU that frees soon rather than take a slice, lays an idle
// GPU out whole again (with migration), moves a job to an idle GPU or one with room, gives a batch's last jobs
// the larger slices by how late they would end, and reserves the new instance for the job it moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "exec/mig_rebalance.h"
#include "gpu/layout.h"
#include "sched/memory_model.h"

namespace ragmig::exec {
namespace {

const gpu::GpuCatalog& h200() { return gpu::gpu_catalog("H200"); }

sched::JobView job_taking(sched::JobId id, const std::string& need, double estimate_s = 36000,
                          std::vector<int> slots = {}) {
  sched::JobView j;
  j.id = id;
  j.need = sched::parse_need(need);
  j.estimate_s = estimate_s;
  j.submitted_at = static_cast<double>(id);
  j.slots = std::move(slots);
  return j;
}

// Makes `j` have done `work_s` by `now` (JobView::work_s: it accrues from the start of its attempt).
void set_work_done(sched::JobView& j, double now, double work_s) {
  j.work_before_s += work_s - j.work_s(now);
}

// H200 number `index` with `layout`, its instances as slots "gpu<i>/<k>" appended to the view.
RebalanceGpu gpu_with(int index, const std::string& layout, sched::ClusterView* view) {
  RebalanceGpu g;
  g.gpu.state.index = index;
  g.gpu.state.catalog = &h200();
  int k = 0;
  for (const auto& p : gpu::parse_layout(h200(), layout)) {
    g.gpu.state.instances.push_back({p, false, -1});
    sched::Slot s = mig_slot(h200().profiles[static_cast<size_t>(p.profile)]);
    s.id = "gpu" + std::to_string(index) + "/" + std::to_string(k++);
    g.gpu.slot_ids.push_back(s.id);
    view->slots.push_back(s);
  }
  return g;
}

int compute(const gpu::Placement& p) { return h200().profiles[static_cast<size_t>(p.profile)].compute_slices; }

// Jobs 1..99 scale as (g/7)^0.3 (small retrievers: seven on 1g slices do 5.4x one on the whole GPU);
// jobs from 100 scale linearly (nothing gained by packing).
SliceSpeeds speeds(const sched::JobView& j) { return power_law_speeds(j.id < 100 ? 0.3 : 1.0); }

// Two changes, for GPUs 0 and 1: GPU 0 stops `job`, GPU 1 holds an instance of `slices` compute slices for it (and
// for no other job). Returns them, GPU 0's first (empty ones where the plan is not that).
std::pair<GpuChange, GpuChange> expect_moved_from_0_to_1(const std::vector<GpuChange>& changes, sched::JobId job,
                                                         int slices) {
  EXPECT_EQ(changes.size(), 2u);
  if (changes.size() != 2u) return {};
  const GpuChange& from = changes[0].gpu == 0 ? changes[0] : changes[1];
  const GpuChange& to = changes[0].gpu == 1 ? changes[0] : changes[1];
  EXPECT_NE(std::find(from.moved.begin(), from.moved.end(), job), from.moved.end());
  EXPECT_EQ(to.reserved.size(), 1u);
  if (!to.reserved.empty()) {
    EXPECT_EQ(to.reserved[0].first, job);
    EXPECT_EQ(compute(to.reserved[0].second), slices);
  }
  return {from, to};
}

TEST(Rebalance, PacksJobsThatGainFromPacking) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "", &view)};
  for (int i = 1; i <= 9; ++i) view.jobs.push_back(job_taking(i, "10gb:1"));
  std::vector<sched::JobId> waiting{42};
  const auto changes = plan_rebalance(view, gpus, speeds, {}, {}, &waiting);
  ASSERT_EQ(changes.size(), 1u);
  ASSERT_EQ(changes[0].target.size(), 7u);
  for (const auto& p : changes[0].target) EXPECT_EQ(compute(p), 1);
  EXPECT_EQ(changes[0].steps, 7u);
  EXPECT_TRUE(changes[0].moved.empty());
  // The first seven in the policy's order each get an instance of their own; the other two wait.
  ASSERT_EQ(changes[0].reserved.size(), 7u);
  std::set<sched::JobId> jobs;
  std::set<gpu::Placement> instances;
  for (const auto& [job, at] : changes[0].reserved) {
    jobs.insert(job);
    instances.insert(at);
    EXPECT_NE(std::find(changes[0].target.begin(), changes[0].target.end(), at), changes[0].target.end());
  }
  EXPECT_EQ(jobs, (std::set<sched::JobId>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(instances.size(), 7u);
  EXPECT_EQ(waiting, (std::vector<sched::JobId>{8, 9}));
}

TEST(Rebalance, JobsThatGainNothingFromPackingGetAWholeGpuEach) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "", &view), gpu_with(1, "", &view)};
  for (int i = 100; i < 105; ++i) view.jobs.push_back(job_taking(i, "10gb:1"));
  const auto changes = plan_rebalance(view, gpus, speeds, {});
  ASSERT_EQ(changes.size(), 2u);
  for (const auto& c : changes) EXPECT_EQ(gpu::to_string(h200(), c.target), "7g.141gb@0");
}

TEST(Rebalance, ALoneJobOnASliceMovesToTheWholeGpuOnlyWithMigrationAndWhenItPays) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "1g.18gb@0+1g.18gb@1", &view)};
  view.now = 5000;
  view.jobs.push_back(job_taking(1, "10gb:1", 36000, {1}));
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, {}).empty());  // no migration: it stays

  RebalanceOptions migrate;
  migrate.migrate = true;
  auto changes = plan_rebalance(view, gpus, speeds, migrate);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].moved, std::vector<sched::JobId>{1});
  ASSERT_EQ(changes[0].reserved.size(), 1u);
  EXPECT_EQ(compute(changes[0].reserved[0].second), 7);
  EXPECT_EQ(gpu::to_string(h200(), changes[0].target), "7g.141gb@0");
  EXPECT_EQ(changes[0].steps, 3u);  // two destroys, one create

  // Nearly done (ten seconds left): the move would cost more than it wins.
  set_work_done(view.jobs[0], view.now, 36000 - 10);
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, migrate).empty());
  // Moved a minute ago: while a job is queued (here one that no instance holds), the GPU cools down first;
  // with nobody queued only ends change the jobs, and nothing makes it thrash.
  set_work_done(view.jobs[0], view.now, 0);
  gpus[0].last_move_at = view.now - 60;
  EXPECT_EQ(plan_rebalance(view, gpus, speeds, migrate).size(), 1u);
  view.jobs.push_back(job_taking(2, "200gb:1"));
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, migrate).empty());
  view.jobs.pop_back();
  // Being stopped already, or started this very moment: it is not moved.
  gpus[0].last_move_at = -1e300;
  view.jobs[0].started_at = view.now;
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, migrate).empty());
  view.jobs[0].started_at = 0;
  view.jobs[0].stopping = true;
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, migrate).empty());
}

// The cool-down after a move is 20 moves' cost unless set: 20 x (10 + 20 + 2 x 2) s at the default costs,
// 100 s at MISO's 5 s; a GPU that moved a job 300 s ago may move again at MISO's cost, not at the default
// (while a job is queued: job 2, which no instance holds).
TEST(Rebalance, TheCoolDownScalesWithWhatAMoveCosts) {
  RebalanceOptions options;
  EXPECT_DOUBLE_EQ(move_seconds(options), 34);
  EXPECT_DOUBLE_EQ(min_interval(options), 680);
  options.min_interval_s = 0;
  EXPECT_DOUBLE_EQ(min_interval(options), 0);

  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "1g.18gb@0+1g.18gb@1", &view)};
  view.now = 5000;
  view.jobs.push_back(job_taking(1, "10gb:1", 36000, {1}));
  view.jobs.push_back(job_taking(2, "200gb:1"));
  gpus[0].last_move_at = view.now - 300;
  RebalanceOptions ours;
  ours.migrate = true;
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, ours).empty());
  RebalanceOptions miso = ours;
  miso.checkpoint_s = 0;
  miso.restart_s = 5;
  miso.mig_step_s = 0;
  EXPECT_DOUBLE_EQ(min_interval(miso), 100);
  EXPECT_EQ(plan_rebalance(view, gpus, speeds, miso).size(), 1u);
  miso.min_interval_s = 600;  // set: as given, whatever the cost
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, miso).empty());
}

// A job on the whole GPU that ends soon is left to end there: the GPU is re-packed for the queue then, at no
// cost, so moving it now wins only until then. (So found: light MISO workloads, miso:20 on 2xA100-40GB, where
// jobs seconds from their end were checkpointed and moved, and mig=auto came out 50 % behind whole GPUs.)
TEST(Rebalance, AJobThatEndsSoonIsNotMovedToPackTheQueue) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "7g.141gb@0", &view)};
  view.now = 5000;
  view.jobs.push_back(job_taking(1, "10gb:1", 36000, {0}));
  for (int i = 2; i <= 7; ++i) view.jobs.push_back(job_taking(i, "10gb:1"));
  RebalanceOptions migrate;
  migrate.migrate = true;
  const auto moved = [&](double left_s) {
    set_work_done(view.jobs[0], view.now, view.jobs[0].estimate_s - left_s);
    const auto changes = plan_rebalance(view, gpus, speeds, migrate);
    return changes.size() == 1 && changes[0].moved == std::vector<sched::JobId>{1};
  };
  // Seven on 1g slices do 3.9x what it does alone; a move costs 34 s of its whole-GPU speed, and must win twice that.
  EXPECT_TRUE(moved(1000));  // 2.9 x 1000 s won
  EXPECT_FALSE(moved(20));   // 2.9 x 20 s: it ends before the move pays (not 20 s at its 1g speed: 36 s)
  EXPECT_FALSE(moved(4));    // nor counted as a minute's work (a floor it had)
}

// A queued job takes a slice now only if that beats waiting for the busy GPU that frees first and running
// there whole: under light load a GPU frees before a packed job would have gained (miso:60 on 4xA100-40GB).
// With moves the slice may also be left for that GPU when it frees: waiting then wins only when the GPU frees
// within about a move's cost (34 s by default).
TEST(Rebalance, AQueuedJobWaitsForAGpuThatFreesSoonerThanASliceWouldPay) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "7g.141gb@0", &view), gpu_with(1, "3g.71gb@4", &view)};
  gpus[1].gpu.state.instances[0].busy = true;  // a 4g slice's room beside it
  view.now = 5000;
  view.jobs.push_back(job_taking(100, "10gb:1", 36000, {0}));
  view.jobs[0].started_at = view.now;  // not moved: it ends where it is
  view.jobs.push_back(job_taking(101, "10gb:1", 1000));
  RebalanceOptions pinned, migrate;
  migrate.migrate = true;
  const auto packs_it = [&](double left_s, const RebalanceOptions& options) {  // GPU 1 made a 4g slice
    set_work_done(view.jobs[0], view.now, view.jobs[0].estimate_s - left_s);
    const auto changes = plan_rebalance(view, gpus, speeds, options);
    return changes.size() == 1 && changes[0].gpu == 1 && changes[0].target.size() == 2;
  };
  for (const auto& options : {pinned, migrate}) {
    EXPECT_FALSE(packs_it(10, options));   // 10 s + 1000 s whole against 1000 s / (4/7) on the slice: it waits
    EXPECT_TRUE(packs_it(5000, options));  // 6000 s against 1750 s: the slice
  }
  // 500 s + 1000 s whole against 1750 s on the slice: it waits for the GPU, unless it can move there when the
  // GPU frees: 500 s on the slice, 34 s to move, the rest (1000 - 500 x 4/7 s) whole: 1248 s.
  EXPECT_FALSE(packs_it(500, pinned));
  EXPECT_TRUE(packs_it(500, migrate));
  EXPECT_FALSE(packs_it(30, migrate));  // 30 s of the slice gain less than the 34 s a move costs
}

// Jobs planned in the same pass count as running ones for the waiting rule: a sweep submitted at once is not
// packed onto slices all together (its long jobs would keep small slices long after the short ones ended).
// At the unmeasured scaling (g/7)^0.73, 4g + 3g do 1.2x one whole GPU.
TEST(Rebalance, AJobWaitsForOnePlannedInTheSamePassWhenSharingWouldNotPay) {
  const auto typical = [](const sched::JobView&) { return power_law_speeds(0.73); };
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "", &view)};
  view.jobs = {job_taking(1, "10gb:1", 3600), job_taking(2, "10gb:1", 3600)};
  auto changes = plan_rebalance(view, gpus, typical, {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(gpu::to_string(h200(), changes[0].target), "7g.141gb@0");  // 7,200 s waiting against 18,000 s
  view.jobs[1].estimate_s = 60;                                          // 3,660 s against 300 s: it shares
  changes = plan_rebalance(view, gpus, typical, {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(gpu::to_string(h200(), changes[0].target), "4g.71gb@0+3g.71gb@4");
  // Three hour-long jobs on two empty GPUs: two run whole, the third waits for one of them.
  view = {};
  gpus = {gpu_with(0, "", &view), gpu_with(1, "", &view)};
  view.jobs = {job_taking(1, "10gb:1", 3600), job_taking(2, "10gb:1", 3600), job_taking(3, "10gb:1", 3600)};
  changes = plan_rebalance(view, gpus, typical, {});
  ASSERT_EQ(changes.size(), 2u);
  for (const auto& c : changes) EXPECT_EQ(gpu::to_string(h200(), c.target), "7g.141gb@0");
}

// Without moves a job packed now keeps its slice to the end. Job 1 runs on the 4g for another ~1,200 s; job 2
// (10 h) waits for that GPU; job 150 (10,000 s, speed proportional to compute) would take
// 23,000 s on the 3g beside job 1 — longer than waiting for the GPU to free and running whole: it waits too.
// With moves both are packed: each can move to the whole GPU when it frees, and working on a slice until then
// beats waiting idle by more than the move costs.
TEST(Rebalance, WithoutMovesAJobIsNotPackedWhereWaitingWouldEndItSooner) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "4g.71gb@0", &view)};
  view.now = 100;
  view.jobs = {job_taking(1, "10gb:1", 1000, {0}), job_taking(2, "10gb:1"), job_taking(150, "10gb:1", 10000)};
  view.jobs[0].started_at = 0;
  for (const bool moves : {false, true}) {
    RebalanceOptions options;
    options.migrate = moves;
    std::vector<sched::JobId> waiting;
    const auto changes = plan_rebalance(view, gpus, speeds, options, {}, &waiting);
    std::set<sched::JobId> planned;
    for (const auto& c : changes)
      for (const auto& [id, at] : c.reserved) planned.insert(id);
    if (moves) {
      EXPECT_TRUE(waiting.empty());
      EXPECT_EQ(planned.count(2), 1u);
      EXPECT_EQ(planned.count(150), 1u);
    } else {
      EXPECT_EQ(waiting, (std::vector<sched::JobId>{2, 150}));
      EXPECT_TRUE(planned.empty());
    }
  }
}

// A GPU nobody uses goes back to one instance of all of it, with migration or without: else the next job to
// arrive starts on one of its slices while whole GPUs sit idle (bench/sim --mig, part (d)).
TEST(Rebalance, AnIdleGpuInSlicesGoesBackWhole) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "4g.71gb@0+3g.71gb@4", &view)};
  view.now = 5000;
  for (const bool moves : {false, true}) {
    RebalanceOptions options;
    options.migrate = moves;
    const auto changes = plan_rebalance(view, gpus, speeds, options);
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(gpu::to_string(h200(), changes[0].target), "7g.141gb@0");
    EXPECT_EQ(changes[0].steps, 3u);  // two destroys, one create
    EXPECT_TRUE(changes[0].moved.empty());
  }
}

TEST(Rebalance, AnIdleGpuPullsARunningJob) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "1g.18gb@0+1g.18gb@1", &view), gpu_with(1, "", &view)};
  view.now = 100;
  view.jobs.push_back(job_taking(100, "10gb:1", 36000, {0}));
  view.jobs.push_back(job_taking(101, "10gb:1", 72000, {1}));
  RebalanceOptions migrate;
  migrate.migrate = true;
  // The longer job goes to the idle GPU's 7g; the other grows where it is.
  expect_moved_from_0_to_1(plan_rebalance(view, gpus, speeds, migrate), 101, 7);
}

// A GPU with room, not only an idle one: a job that runs no faster on a slice than its share of the GPU
// (linear speed) leaves a full GPU of small retrievers for the 4g beside a job that just started (pinned), and
// one of the six it leaves grows into its slice.
TEST(Rebalance, ARunningJobMovesToAnotherGpusRoom) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{
      gpu_with(0, "1g.18gb@0+1g.18gb@1+1g.18gb@2+1g.18gb@3+1g.18gb@4+1g.18gb@5+1g.18gb@6", &view),
      gpu_with(1, "4g.71gb@0+3g.71gb@4", &view)};
  view.now = 5000;
  for (int i = 0; i < 6; ++i) view.jobs.push_back(job_taking(i + 1, "10gb:1", 36000, {i}));
  view.jobs.push_back(job_taking(100, "10gb:1", 36000, {6}));
  view.jobs.push_back(job_taking(7, "10gb:1", 36000, {8}));
  view.jobs.back().started_at = view.now;  // started this very moment: it stays on the 3g
  RebalanceOptions migrate;
  migrate.migrate = true;
  const auto changes = plan_rebalance(view, gpus, speeds, migrate);
  const auto [from, to] = expect_moved_from_0_to_1(changes, 100, 4);
  EXPECT_TRUE(to.moved.empty());  // the job on the 3g stays
  int two = 0;
  for (const auto& p : from.target) two += compute(p) == 2;
  EXPECT_EQ(two, 1);
  // Without moves nothing changes.
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, {}).empty());
}

// At a batch's end (nothing queued, nothing arrived for drain_after_s) the job that would end last takes the
// larger slice; while jobs arrive or wait, summed speed decides and two equal jobs are not swapped.
TEST(Rebalance, AtABatchsEndTheJobThatWouldEndLastTakesTheLargerSlice) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "4g.71gb@0+3g.71gb@4", &view)};
  view.now = 5000;
  view.jobs.push_back(job_taking(1, "10gb:1", 10000, {0}));  // on the 4g, 10,000 s of work left
  view.jobs.push_back(job_taking(2, "10gb:1", 30000, {1}));  // on the 3g, 30,000 s left
  RebalanceOptions migrate;
  migrate.migrate = true;
  const auto changes = plan_rebalance(view, gpus, speeds, migrate);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(std::set<sched::JobId>(changes[0].moved.begin(), changes[0].moved.end()), (std::set<sched::JobId>{1, 2}));
  for (const auto& [job, at] : changes[0].reserved) EXPECT_EQ(compute(at), job == 2 ? 4 : 3) << job;

  RebalanceOptions never = migrate;
  never.drain_after_s = -1;
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, never).empty());
  view.jobs.push_back(job_taking(3, "200gb:1"));  // queued (no instance holds it)
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, migrate).empty());
  view.jobs.back().need = sched::parse_need("cpu:1");  // not a GPU job; but it arrived 500 s ago
  view.jobs.back().submitted_at = view.now - 500;
  view.jobs.back().slots = {};
  EXPECT_TRUE(plan_rebalance(view, gpus, speeds, migrate).empty());
}

TEST(Rebalance, BusyInstancesAndStoppingJobsAreNeverTouched) {
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "3g.71gb@4+1g.18gb@0", &view)};
  gpus[0].gpu.state.instances[0].busy = true;  // something outside the scheduler runs there
  view.jobs.push_back(job_taking(1, "10gb:1", 36000, {1}));
  view.jobs[0].stopping = true;
  for (int i = 2; i < 10; ++i) view.jobs.push_back(job_taking(i, "10gb:1"));
  RebalanceOptions migrate;
  migrate.migrate = true;
  const auto changes = plan_rebalance(view, gpus, speeds, migrate);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_TRUE(changes[0].moved.empty());
  const auto& target = changes[0].target;
  for (const auto& keep : gpu::parse_layout(h200(), "3g.71gb@4+1g.18gb@0"))
    EXPECT_NE(std::find(target.begin(), target.end(), keep), target.end());
  EXPECT_EQ(target.size(), 5u);  // and three 1g slices in the room left beside them
}

TEST(Rebalance, WithDynamicBatchAResizableJobIsPlannedWhereOnlyItsSmallerBatchFits) {
  // Seven small retrievers that need 40 GB at batch 256 and 17.5 GB (the prior's) at their least batch, 64.
  sched::ClusterView view;
  std::vector<RebalanceGpu> gpus{gpu_with(0, "", &view)};
  for (int i = 1; i <= 7; ++i) {
    sched::JobView j = job_taking(i, "40gb:1");
    j.configured_batch = j.batch_size = 256;
    j.min_batch_size = 64;
    j.memory = sched::prior_memory(j.need, 256);
    view.jobs.push_back(j);
  }
  // At their own batch two fit (3g + 4g); with dynamic batch all seven are packed on 1g.18gb slices.
  auto changes = plan_rebalance(view, gpus, speeds, {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].reserved.size(), 2u);
  RebalanceOptions shrink;
  shrink.shrink = true;
  changes = plan_rebalance(view, gpus, speeds, shrink);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].reserved.size(), 7u);
  for (const auto& [job, at] : changes[0].reserved) EXPECT_EQ(compute(at), 1);
  // A job that is not resizable still needs its 40 GB.
  for (auto& j : view.jobs) j.configured_batch = j.min_batch_size = 0;
  EXPECT_EQ(plan_rebalance(view, gpus, speeds, shrink).at(0).reserved.size(), 2u);
}

// Random clusters, jobs and options: whatever the plan, every target is a valid layout that keeps the instances
// busy outside the scheduler, those of the running jobs it does not stop and those an earlier plan made for a
// queued job; it stops only running jobs it may
// move (with migration, not stopping, not started this moment), and each of them with an instance held for it
// on some GPU — a job is never checkpointed for a place it does not get; an instance is held for one job, one
// that nobody else keeps, and only queued or moved jobs are given one.
TEST(Rebalance, RandomClustersGetValidPlansThatStopNoJobWithoutAPlaceForIt) {
  const auto layouts = gpu::enumerate_layouts(h200());
  std::mt19937 rng(17);
  const auto pick = [&](auto n) { return static_cast<decltype(n)>(rng() % static_cast<uint64_t>(n)); };
  const auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const std::vector<std::string> needs{"5gb:1", "10gb:1", "17gb:1", "30gb:1", "60gb:1", "200gb:1"};
  size_t moves = 0, reservations = 0;
  for (int trial = 0; trial < 400; ++trial) {
    sched::ClusterView view;
    view.now = 1000 + pick(50000);
    std::vector<RebalanceGpu> gpus;
    std::vector<size_t> first_slot;  // GPU g's instance k is view.slots[first_slot[g] + k]
    const int n = 1 + pick(4);
    sched::JobId next = 1;
    const auto speeds_of = [](const sched::JobView& j) { return power_law_speeds(0.2 + 0.4 * (j.id % 3)); };
    for (int g = 0; g < n; ++g) {
      first_slot.push_back(view.slots.size());
      gpus.push_back(gpu_with(g, gpu::to_string(h200(), layouts[pick(layouts.size())]), &view));
      gpus.back().last_move_at = chance(0.3) ? view.now - pick(1000) : -1e300;
      auto& instances = gpus.back().gpu.state.instances;
      for (size_t k = 0; k < instances.size(); ++k) {
        const int slot = static_cast<int>(first_slot.back() + k);
        if (chance(0.05)) {
          instances[k].busy = true;  // outside the scheduler
        } else if (chance(0.6)) {
          const auto& profile = h200().profiles[static_cast<size_t>(instances[k].placement.profile)];
          std::string need;
          do need = needs[pick(needs.size())];
          while (!sched::fits(sched::parse_need(need), mig_slot(profile)));
          sched::JobView j = job_taking(next++ * 3 + pick(3), need, 600 + pick(20000), {slot});
          const double done = j.estimate_s * std::uniform_real_distribution<double>(0, 1.2)(rng);
          j.started_at = chance(0.1) ? view.now : view.now - 1 - pick(5000);
          set_work_done(j, view.now, done);
          j.stopping = chance(0.05);
          view.jobs.push_back(j);
        }
      }
    }
    std::set<int> idle;  // slots no job runs on
    for (size_t i = 0; i < view.slots.size(); ++i) idle.insert(static_cast<int>(i));
    for (const auto& j : view.jobs) idle.erase(j.slots[0]);
    for (int q = pick(12); q > 0; --q) {
      const double estimate_s = chance(0.1) ? 0 : 600 + pick(20000);
      sched::JobView j = job_taking(next++ * 3 + pick(3), needs[pick(needs.size())], estimate_s);
      j.submitted_at = view.now - pick(3000);
      if (!idle.empty() && chance(0.15)) {  // an earlier plan made an instance for it
        view.slots[static_cast<size_t>(*idle.begin())].reserved_for = j.id;
        idle.erase(idle.begin());
      }
      view.jobs.push_back(j);
    }
    RebalanceOptions options;
    options.migrate = chance(0.6);
    options.drain_after_s = std::vector<double>{-1, 0, 1000}[pick(3)];
    std::vector<sched::JobId> waiting;
    const auto changes = plan_rebalance(view, gpus, speeds_of, options, {}, &waiting);

    std::map<sched::JobId, const sched::JobView*> jobs;
    for (const auto& j : view.jobs) jobs[j.id] = &j;
    std::set<sched::JobId> moved, reserved;
    std::set<int> changed;
    for (const auto& c : changes) {
      ASSERT_TRUE(changed.insert(c.gpu).second) << "one change per GPU";
      ASSERT_TRUE(c.gpu >= 0 && c.gpu < n);
      EXPECT_TRUE(gpu::is_valid_layout(h200(), c.target)) << gpu::layout_error(h200(), c.target);
      for (sched::JobId id : c.moved) {
        ASSERT_TRUE(jobs.count(id)) << "trial " << trial;
        const sched::JobView& j = *jobs[id];
        EXPECT_TRUE(options.migrate && j.running() && !j.stopping && j.started_at < view.now) << "trial " << trial;
        EXPECT_TRUE(moved.insert(id).second);
      }
      std::set<gpu::Placement> held;
      for (const auto& [id, at] : c.reserved) {
        EXPECT_TRUE(reserved.insert(id).second) << "job " << id << " held twice, trial " << trial;
        EXPECT_TRUE(held.insert(at).second) << "an instance held twice, trial " << trial;
        EXPECT_NE(std::find(c.target.begin(), c.target.end(), at), c.target.end()) << "trial " << trial;
      }
    }
    for (sched::JobId id : moved)
      EXPECT_TRUE(reserved.count(id)) << "job " << id << " stopped for nowhere, trial " << trial;
    for (sched::JobId id : reserved) EXPECT_TRUE(!jobs[id]->running() || moved.count(id)) << "trial " << trial;
    // What stays: busy instances, those of running jobs not stopped and those made for a queued job; none is
    // held for another job.
    std::map<int, sched::JobId> runs_on;  // slot -> the running job that is not stopped
    for (const auto& j : view.jobs)
      if (j.running() && !moved.count(j.id)) runs_on[j.slots[0]] = j.id;
    for (const auto& c : changes) {
      const size_t g = static_cast<size_t>(c.gpu);
      const auto& instances = gpus[g].gpu.state.instances;
      std::vector<gpu::Placement> staying;
      for (size_t k = 0; k < instances.size(); ++k) {
        const int slot = static_cast<int>(first_slot[g] + k);
        const sched::JobId made_for = view.slots[static_cast<size_t>(slot)].reserved_for;
        if (instances[k].busy || runs_on.count(slot) || (made_for > 0 && jobs.count(made_for)))
          staying.push_back(instances[k].placement);
      }
      for (const auto& p : staying) {
        EXPECT_NE(std::find(c.target.begin(), c.target.end(), p), c.target.end()) << "trial " << trial;
        for (const auto& [id, at] : c.reserved) EXPECT_NE(at, p) << "job " << id << ", trial " << trial;
      }
    }
    moves += moved.size();
    reservations += reserved.size();
  }
  EXPECT_GT(moves, 50u);  // the trials exercise moves and plans, not only empty ones
  EXPECT_GT(reservations, 500u);
  std::cout << moves << " moves, " << reservations << " reservations\n";
}

}  // namespace
}  // namespace ragmig::exec
