// The MIG partitioner: what the queue asks of the planner, the layout it picks for an empty H200, and the
// slots offered while a GPU is re-partitioned.
#include <gtest/gtest.h>

#include "gpu/mig_catalog.h"
#include "sim/mig_partitioner.h"

namespace ragmig::sim {
namespace {

sched::JobView queued(sched::JobId id, const std::string& need, int64_t priority = 0) {
  sched::JobView j;
  j.id = id;
  j.need = sched::parse_need(need);
  j.priority = priority;
  return j;
}

TEST(Partitioner, PlansForTheQueueAndHidesInstancesInFlux) {
  MigPartitioner parts(build_cluster(parse_cluster_spec("1xH200:mig=auto,1xV100")));
  ASSERT_EQ(parts.slots().size(), 1u);  // the V100; the H200 has no instances yet
  sched::ClusterView view;
  view.slots = parts.slots();
  for (int i = 0; i < 9; ++i) view.jobs.push_back(queued(i + 1, "10gb:1"));
  auto changes = parts.plan(view);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].gpu, 0);
  const auto& h200 = gpu::gpu_catalog("H200");
  // The most jobs at once: seven 1g slices (one may be the +me variant: it holds 18 GB as well).
  ASSERT_EQ(changes[0].target.size(), 7u);
  for (const auto& p : changes[0].target) EXPECT_EQ(h200.profiles[static_cast<size_t>(p.profile)].compute_slices, 1);
  EXPECT_EQ(changes[0].steps, 7u);
  EXPECT_TRUE(parts.plan(view).empty());  // the same question is not asked twice
  parts.begin(changes[0]);
  EXPECT_TRUE(parts.repartitioning(0));
  EXPECT_EQ(parts.slots().size(), 1u);
  parts.finish(0);
  const auto slots = parts.slots();
  ASSERT_EQ(slots.size(), 8u);
  EXPECT_EQ(slots[0].profile, "1g.18gb");
  EXPECT_EQ(slots.back().id, "gpu1");

  // Two of them busy, the queue now two jobs wanting a whole GPU: nothing can make room around them.
  view.slots = slots;
  view.jobs = {queued(20, "gpu:1"), queued(21, "gpu:1")};
  auto a = queued(1, "10gb:1");
  a.slots = {0};
  auto b = queued(2, "10gb:1");
  b.slots = {1};
  view.jobs.push_back(a);
  view.jobs.push_back(b);
  EXPECT_TRUE(parts.plan(view).empty());
  // When only the two 1g jobs remain, two large jobs fit beside them: the idle slices are re-cut.
  view.jobs = {a, b, queued(30, "20gb:1"), queued(31, "20gb:1")};
  changes = parts.plan(view);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_LT(changes[0].target.size(), 7u);
  parts.begin(changes[0]);
  // While it is cut, the two busy slices stay on offer and the idle ones that go are not.
  const auto during = parts.slots();
  int kept = 0;
  for (const auto& s : during) kept += s.id == slots[0].id || s.id == slots[1].id;
  EXPECT_EQ(kept, 2);
  EXPECT_LT(during.size(), 8u);
}

}  // namespace
}  // namespace ragmig::sim
