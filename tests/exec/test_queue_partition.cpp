// The queue as the planner's question: needs become demands per model, running jobs' instances are kept,
// CPU jobs ask nothing, priorities order what is placed first, and the question text changes exactly when
// the answer could.
#include <gtest/gtest.h>

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
  EXPECT_EQ(demand_for(h, sched::parse_need("20gb:1"))->memory_mib, 20 * 1024);
  EXPECT_EQ(demand_for(h, sched::parse_need("20gb:1"))->profile, "");
  EXPECT_EQ(demand_for(h, sched::parse_need("3g.71gb:1"))->profile, "3g.71gb");
  EXPECT_EQ(demand_for(h, sched::parse_need("gpu:1"))->profile, "7g.141gb");
  EXPECT_EQ(demand_for(h, sched::parse_need("1g.10gb:1"))->profile, "1g.18gb");
  EXPECT_FALSE(demand_for(h, sched::parse_need("cpu:1")).has_value());
  // What the planner creates for a need, the scheduler accepts for it.
  for (const std::string need : {"10gb:1", "20gb:1", "3g.71gb:1", "gpu:1", "70gb:1"}) {
    const auto d = demand_for(h, sched::parse_need(need));
    ASSERT_TRUE(d.has_value()) << need;
    const std::string name = d->profile.empty() ? smallest_profile(h, sched::parse_need(need)) : d->profile;
    EXPECT_TRUE(sched::fits(sched::parse_need(need), mig_slot(*h.find_profile(name)))) << need;
  }
}

TEST(QueuePartition, RunningJobsKeepTheirInstances) {
  sched::ClusterView view;
  const PlannableGpu g = h200("1g.18gb@0+1g.18gb@1+1g.18gb@2+1g.18gb@3+1g.18gb@4+1g.18gb@5+1g.18gb@6", &view);
  view.jobs = {job(1, "1g.18gb:1", 0, {4}), job(2, "3g.71gb:1")};  // job 1 runs on 1g.18gb@4
  const auto plans = plan_for_queue(view, {g});
  ASSERT_EQ(plans.size(), 1u);
  const auto& h = *g.state.catalog;
  // 3g.71gb fits at 0 only (4..7 holds the busy instance): 0..3 go, 4, 5, 6 stay.
  EXPECT_EQ(gpu::to_string(h, plans[0].target), "3g.71gb@0+1g.18gb@4+1g.18gb@5+1g.18gb@6");
  for (const auto& s : plans[0].steps) {
    if (s.kind == gpu::StepKind::DestroyGpuInstance) {
      EXPECT_LT(s.placement.start, 4) << gpu::to_string(h, s.placement);
    }
  }
  // Nothing queued, or only CPU jobs: no question, no plan.
  view.jobs = {job(1, "1g.18gb:1", 0, {4}), job(3, "cpu:1")};
  EXPECT_EQ(queue_question(view, {g}), "");
  EXPECT_TRUE(plan_for_queue(view, {g}).empty());
}

TEST(QueuePartition, HigherPriorityIsPlacedFirst) {
  sched::ClusterView view;
  const PlannableGpu g = h200("", &view);
  // A whole GPU and a 4g.71gb cannot share one H200: the higher priority gets its instance.
  view.jobs = {job(1, "4g.71gb:1", 1), job(2, "gpu:1", 9)};
  const auto plans = plan_for_queue(view, {g});
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(gpu::to_string(*g.state.catalog, plans[0].target), "7g.141gb@0");
  view.jobs = {job(1, "4g.71gb:1", 9), job(2, "gpu:1", 1)};
  EXPECT_EQ(gpu::to_string(*g.state.catalog, plan_for_queue(view, {g})[0].target).substr(0, 9), "4g.71gb@0");
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
  EXPECT_NE(queue_question(view, {g}), q2);
  // A GPU already fitted to the queue is not planned again.
  sched::ClusterView fitted;
  const PlannableGpu f = h200("3g.71gb@0", &fitted);
  fitted.jobs = {job(1, "3g.71gb:1")};
  EXPECT_TRUE(plan_for_queue(fitted, {f}).empty());
}

}  // namespace
}  // namespace ragmig::exec
