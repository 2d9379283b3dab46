// A change's three phases: it drains until no attempt that ran when it was planned still runs (also when the
// moved job already restarted on its new instance), instances it destroys are nobody's meanwhile, the new
// instance is held for its moved job until that job runs there, and a job awaits only while its GPU changes.
#include <gtest/gtest.h>

#include "exec/mig_moves.h"
#include "gpu/layout.h"
#include "gpu/mig_catalog.h"

namespace ragmig::exec {
namespace {

const gpu::GpuCatalog& h200_catalog() { return gpu::gpu_catalog("H200"); }

sched::JobView running(sched::JobId id, double started_at, bool stopping = false) {
  sched::JobView j;
  j.id = id;
  j.need = sched::parse_need("10gb:1");
  j.slots = {0};
  j.started_at = started_at;
  j.stopping = stopping;
  return j;
}

sched::JobView queued(sched::JobId id) {
  sched::JobView j;
  j.id = id;
  j.need = sched::parse_need("10gb:1");
  return j;
}

TEST(MigMoves, DrainThenStepsThenHoldTheNewInstanceUntilTheJobRunsThere) {
  const auto small = gpu::parse_placement(h200_catalog(), "1g.18gb@0");
  const auto whole = gpu::parse_placement(h200_catalog(), "7g.141gb@0");
  GpuChange change;
  change.gpu = 0;
  change.target = {whole};
  change.steps = 3;
  change.moved = {7};
  change.reserved = {{7, whole}};
  MigMoves moves;
  moves.begin(change, 100);
  EXPECT_TRUE(moves.changing(0));
  EXPECT_TRUE(moves.draining(0));
  EXPECT_EQ(moves.last_move_at(0), 100);
  EXPECT_EQ(moves.last_move_at(1), -1e300);
  EXPECT_EQ(moves.holder(0, small), sched::Slot::kVacating);  // about to go: nobody starts there
  EXPECT_EQ(moves.holder(0, whole), 7);

  sched::ClusterView view;
  view.jobs = {running(7, 50, true)};  // stopping, still on its old instance
  EXPECT_TRUE(moves.settle(view).empty());
  auto none = [](int, const gpu::Placement&) { return false; };
  EXPECT_EQ(moves.awaiting(none), std::vector<sched::JobId>{7});
  view.jobs = {queued(7)};  // checkpointed and requeued
  EXPECT_EQ(moves.settle(view), std::vector<int>{0});
  EXPECT_TRUE(moves.settle(view).empty());  // once
  EXPECT_FALSE(moves.draining(0));
  moves.finish(0);
  EXPECT_FALSE(moves.changing(0));
  EXPECT_TRUE(moves.awaiting(none).empty());  // its GPU no longer changes: it may start anywhere
  EXPECT_EQ(moves.holder(0, whole), 7);       // but the instance made for it is still its own
  EXPECT_EQ(moves.holder(0, small), 0);
  view.jobs = {running(7, 130)};  // it runs: the hold ends
  moves.settle(view);
  EXPECT_EQ(moves.holder(0, whole), 0);
  EXPECT_TRUE(moves.idle());
}

TEST(MigMoves, AMovedJobAlreadyOnItsNewInstanceDoesNotKeepTheChangeDraining) {
  GpuChange change;
  change.gpu = 2;
  change.target = {gpu::parse_placement(h200_catalog(), "4g.71gb@0")};
  change.moved = {5};
  MigMoves moves;
  moves.begin(change, 100);
  sched::ClusterView view;
  view.jobs = {running(5, 112)};  // restarted after the plan (on an instance that existed already)
  EXPECT_EQ(moves.settle(view), std::vector<int>{2});
  // A change without moved jobs has nothing to wait for.
  GpuChange plain;
  plain.gpu = 3;
  moves.begin(plain, 200);
  EXPECT_FALSE(moves.draining(3));
  EXPECT_EQ(moves.last_move_at(3), -1e300);
}

}  // namespace
}  // namespace ragmig::exec
