// The simulator's mig=auto GPUs: a re-partition for the queue offers its new instances only when its steps
// are done; a move stops the job first, keeps its instance on offer while it
// stops, and hands the new instance to it alone.
#include <gtest/gtest.h>

#include <set>

#include "gpu/mig_catalog.h"
#include "sim/mig_partitioner.h"

namespace ragmig::sim {
namespace {

sched::JobView queued(sched::JobId id, const std::string& need) {
  sched::JobView j;
  j.id = id;
  j.need = sched::parse_need(need);
  j.submitted_at = static_cast<double>(id);
  j.estimate_s = 36000;
  return j;
}

exec::SliceSpeeds small(const sched::JobView&) { return exec::power_law_speeds(0.3); }

TEST(Partitioner, PlansForTheQueueAndOffersTheNewInstancesWhenMade) {
  MigPartitioner parts(build_cluster(parse_cluster_spec("1xH200:mig=auto,1xV100")), small, {});
  ASSERT_EQ(parts.slots().size(), 1u);  // the V100; the H200 has no instances yet
  sched::ClusterView view;
  view.slots = parts.slots();
  for (int i = 1; i <= 9; ++i) view.jobs.push_back(queued(i, "10gb:1"));
  auto actions = parts.update(view, 0);
  EXPECT_TRUE(actions.stop.empty());
  EXPECT_TRUE(actions.slots_changed);
  EXPECT_TRUE(parts.changing(0));
  EXPECT_EQ(parts.next_event(), 14);  // seven creates of 2 s
  EXPECT_EQ(parts.slots().size(), 1u);
  // The first seven in the policy's order wait for the instances made for them; the other two wait for the
  // next plan and take no instance of the H200 meanwhile (they may take the V100).
  EXPECT_EQ(parts.awaiting(), (std::vector<sched::JobId>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(parts.waiting(), (std::vector<sched::JobId>{8, 9}));
  EXPECT_FALSE(parts.update(view, 1).slots_changed);  // the same question is not asked twice

  EXPECT_TRUE(parts.update(view, 14).slots_changed);
  EXPECT_FALSE(parts.changing(0));
  const auto slots = parts.slots();
  ASSERT_EQ(slots.size(), 8u);
  std::set<sched::JobId> held_for;
  for (size_t k = 0; k < 7; ++k) {
    EXPECT_EQ(slots[k].profile, "1g.18gb");
    EXPECT_TRUE(slots[k].reshapable);
    held_for.insert(slots[k].reserved_for);
  }
  EXPECT_EQ(held_for, (std::set<sched::JobId>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(parts.awaiting().empty());  // made: each job can start on its own
  EXPECT_EQ(slots.back().id, "gpu1");
  EXPECT_EQ(parts.repartitions(), 1);
}

TEST(Partitioner, AMoveStopsTheJobThenReCutsTheGpuThenHoldsTheNewInstanceForIt) {
  exec::RebalanceOptions options;
  options.migrate = true;
  MigPartitioner parts(build_cluster(parse_cluster_spec("1xH200:mig=auto")), small, options);
  sched::ClusterView view;
  view.slots = parts.slots();
  view.jobs = {queued(1, "10gb:1"), queued(2, "10gb:1")};
  parts.update(view, 0);
  parts.update(view, 100);  // a 4g and a 3g slice exist now: two such jobs do 1.6x one on the whole GPU
  view.slots = parts.slots();
  ASSERT_EQ(view.slots.size(), 2u);

  // Job 2 ended; job 1 runs alone on the 4g slice: it is moved to the whole GPU.
  view.jobs = {queued(1, "10gb:1")};
  view.jobs[0].slots = {0};
  view.now = 1000;
  auto actions = parts.update(view, 1000);
  EXPECT_EQ(actions.stop, std::vector<sched::JobId>{1});
  EXPECT_TRUE(parts.changing(0));
  EXPECT_EQ(parts.slots().size(), 1u);  // its own slice stays on offer while it stops; the idle one goes
  EXPECT_EQ(parts.slots()[0].id, view.slots[0].id);

  view.jobs[0].stopping = true;
  parts.update(view, 1010);
  EXPECT_TRUE(parts.changing(0));  // still stopping: nothing destroyed yet
  view.jobs[0].slots.clear();  // checkpointed and requeued
  view.jobs[0].stopping = false;
  view.slots = parts.slots();
  parts.update(view, 1020);
  EXPECT_EQ(parts.awaiting(), std::vector<sched::JobId>{1});
  EXPECT_EQ(parts.next_event(), 1020 + 3 * 2);
  parts.update(view, 1026);
  const auto slots = parts.slots();
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].profile, "7g.141gb");
  EXPECT_EQ(slots[0].reserved_for, 1);
  EXPECT_EQ(parts.migrations(), 1);
}

}  // namespace
}  // namespace ragmig::sim
