// The queue as the planner's question: running jobs' instances are kept, CPU jobs ask nothing, the
// policy's order (else priorities) decides what is planned first, and the question text changes exactly when
// the answer could.
#include <gtest/gtest.h>

#include "exec/machine_partitioner.h"
#include "exec/queue_partition.h"
#include "gpu/layout.h"

namespace ragmig::exec {
namespace {

sched::JobView job(sched::JobId id, const std::string& need, int64_t priority = 0, std::vector<int> slots = {}) {
  sched::JobView j;
  j.id = id;
  j.need = sched::parse_need(need);
  j.priority = priority;
  j.slots = std::move(slots);
  return j;
}

// An H200 with `layout` ("1g.18gb@0+..."), its instances named "mig:0:<k>:0" as slots of the view.
PlannableGpu h200(const std::string& layout, sched::ClusterView* view) {
  PlannableGpu g;
  g.state.index = 0;
  g.state.catalog = &gpu::gpu_catalog("H200");
  int k = 0;
  for (const auto& p : gpu::parse_layout(*g.state.catalog, layout)) {
    g.state.instances.push_back({p, false, k});
    sched::Slot s = mig_slot(g.state.catalog->profiles[static_cast<size_t>(p.profile)]);
    s.id = "mig:0:" + std::to_string(k++) + ":0";
    g.slot_ids.push_back(s.id);
    view->slots.push_back(s);
  }
  return g;
}

TEST(QueuePartition, Demands) {
  const auto& h = gpu::gpu_catalog("H200");
  EXPECT_EQ(smallest_profile(h, sched::parse_need("10gb:1")), "1g.18gb");
  EXPECT_EQ(smallest_profile(h, sched::parse_need("20gb:1")), "1g.35gb");
  EXPECT_EQ(smallest_profile(h, sched::parse_need("gpu:1")), "7g.141gb");
  EXPECT_EQ(smallest_profile(h, sched::parse_need("1g.10gb:1")), "1g.18gb");
  EXPECT_EQ(smallest_profile(h, sched::parse_need("200gb:1")), "");
  EXPECT_EQ(smallest_profile(h, sched::parse_need("cpu:1")), "");
}

SliceSpeeds typical(const sched::JobView&) { return power_law_speeds(kUnmeasuredExponent); }

TEST(QueuePartition, RunningJobsKeepTheirInstances) {
  sched::ClusterView view;
  const PlannableGpu g = h200("1g.18gb@0+1g.18gb@1+1g.18gb@2+1g.18gb@3+1g.18gb@4+1g.18gb@5+1g.18gb@6", &view);
  view.jobs = {job(1, "1g.18gb:1", 0, {4}), job(2, "3g.71gb:1")};  // job 1 runs on 1g.18gb@4
  const auto plans = rebalance_plans(view, {g}, typical);
  ASSERT_EQ(plans.size(), 1u);
  const auto& h = *g.state.catalog;
  // Job 2 asks for at least a 3g.71gb; slices 0..3 (4..7 holds the busy instance) make a 4g.71gb, which
  // runs it faster: 0..3 go, 4, 5, 6 stay.
  EXPECT_EQ(gpu::to_string(h, plans[0].target), "4g.71gb@0+1g.18gb@4+1g.18gb@5+1g.18gb@6");
  for (const auto& s : plans[0].steps) {
    if (s.kind == gpu::StepKind::DestroyGpuInstance) {
      EXPECT_LT(s.placement.start, 4) << gpu::to_string(h, s.placement);
    }
  }
  // Nothing queued, or only CPU jobs: no question, no plan.
  view.jobs = {job(1, "1g.18gb:1", 0, {4}), job(3, "cpu:1")};
  EXPECT_EQ(queue_question(view, {g}), "");
  EXPECT_TRUE(rebalance_plans(view, {g}, typical).empty());
}

TEST(QueuePartition, TheQueueIsPlannedInThePolicysOrder) {
  sched::ClusterView view;
  const PlannableGpu g = h200("", &view);
  // Two 10 GB jobs share the GPU (4g + 3g do 1.2x one whole GPU); a whole-GPU job cannot join them. The
  // second is short: packed beside the first it ends long before the first would free the GPU (two jobs
  // of an hour each would rather run one after the other: see the Rebalance tests).
  view.jobs = {job(1, "10gb:1", 9), job(2, "10gb:1", 9), job(3, "gpu:1", 1)};
  view.jobs[1].estimate_s = 60;
  const auto& h = *g.state.catalog;
  auto plans = rebalance_plans(view, {g}, typical);  // no order given: by priority
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(gpu::to_string(h, plans[0].target), "4g.71gb@0+3g.71gb@4");
  plans = rebalance_plans(view, {g}, typical, {3, 1, 2});  // the policy puts the whole-GPU job first
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(gpu::to_string(h, plans[0].target), "7g.141gb@0");
}

TEST(QueuePartition, TheQuestionChangesWithTheQueueAndTheBusyInstances) {
  sched::ClusterView view;
  const PlannableGpu g = h200("1g.18gb@0+1g.18gb@1", &view);
  view.jobs = {job(1, "3g.71gb:1")};
  const std::string q1 = queue_question(view, {g});
  EXPECT_FALSE(q1.empty());
  EXPECT_EQ(queue_question(view, {g}), q1);
  view.jobs.push_back(job(2, "1g.18gb:1", 0, {1}));  // a job now runs on 1g.18gb@1
  const std::string q2 = queue_question(view, {g});
  EXPECT_NE(q2, q1);
  view.jobs.push_back(job(3, "3g.71gb:1"));
  const std::string q3 = queue_question(view, {g});
  EXPECT_NE(q3, q2);
  // Another job in its place, of the same need and priority: the plan reserves and holds back jobs by id.
  view.jobs.back() = job(4, "3g.71gb:1");
  EXPECT_NE(queue_question(view, {g}), q3);
  // A GPU already laid out at its best for the queue is not planned again.
  sched::ClusterView fitted;
  const PlannableGpu f = h200("7g.141gb@0", &fitted);
  fitted.jobs = {job(1, "3g.71gb:1")};
  EXPECT_TRUE(rebalance_plans(fitted, {f}, typical).empty());
}

}  // namespace
}  // namespace ragmig::exec
