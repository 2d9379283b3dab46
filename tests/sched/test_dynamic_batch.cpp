// Dynamic batch as pure functions: the memory model (prior, learned, out of memory) and the layer over an
// ordering policy that starts a resizable job smaller on a free slice rather than let it wait, and grows it back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "sched/dynamic_batch.h"
#include "sched/memory_model.h"
#include "sched/mig_slot.h"
#include "sched/policy.h"

namespace ragmig::sched {
namespace {

// A resizable job: `need` at batch `batch`, down to `least`, with the prior memory model.
JobView resizable(JobId id, const std::string& need, int64_t batch, int64_t least) {
  JobView j;
  j.id = id;
  j.need = parse_need(need);
  j.configured_batch = j.batch_size = batch;
  j.min_batch_size = least;
  j.memory = prior_memory(j.need, batch);
  return j;
}

ClusterView view_of(std::vector<Slot> slots, std::vector<JobView> jobs) {
  ClusterView v;
  v.slots = std::move(slots);
  v.jobs = std::move(jobs);
  return v;
}

TEST(MemoryModel, PriorLearnedAndTheLargestBatchThatFits) {
  // 10 GB at batch 64: a quarter fixed (2,560 MiB), 120 MiB per sample.
  const MemoryModel prior = prior_memory(parse_need("10gb"), 64);
  EXPECT_FALSE(prior.learned);
  EXPECT_DOUBLE_EQ(memory_at(prior, 64), 10240);
  EXPECT_DOUBLE_EQ(memory_at(prior, 16), 2560 + 16 * 120);
  EXPECT_EQ(largest_batch_within(prior, 5120, 16, 64, 1), 21);  // (5120 - 2560) / 120
  EXPECT_EQ(largest_batch_within(prior, 5120, 16, 64, 2), 20);  // even, for two replicas
  EXPECT_EQ(largest_batch_within(prior, 5120, 32, 64, 1), 0);   // not even the least batch fits
  EXPECT_EQ(largest_batch_within(prior, 40960, 16, 64, 1), 64); // never above the configured batch
  EXPECT_EQ(largest_batch_within(prior, 2000, 1, 64, 1), 0);    // not even the fixed part fits

  const MemoryModel learned = learned_memory(6000, 1000, 50);
  EXPECT_TRUE(learned.learned);
  EXPECT_DOUBLE_EQ(learned.fixed_mb, 1000);
  EXPECT_DOUBLE_EQ(learned.per_sample_mb, 100);
  EXPECT_FALSE(learned_memory(900, 1000, 50).learned);  // a peak below the state is no report
  EXPECT_FALSE(learned_memory(6000, 1000, 0).learned);

  // Out of memory at batch 64 on 8 GiB although the model said 6,400 MiB; the retry asks for 32: 8 GiB now
  // holds 32 and no more.
  const MemoryModel wrong{1000, 84.375, true};
  const MemoryModel fixed = after_out_of_memory(wrong, 8192, 32);
  EXPECT_DOUBLE_EQ(fixed.fixed_mb, 1000);
  EXPECT_EQ(largest_batch_within(fixed, 8192, 1, 64, 1), 32);
  EXPECT_EQ(largest_batch_within(after_out_of_memory(wrong, 8192, 0), 8192, 1, 64, 1), 0);  // no retry: none fits
  const MemoryModel already{1000, 250, true};  // already says 8 GiB holds 28
  EXPECT_DOUBLE_EQ(after_out_of_memory(already, 8192, 32).per_sample_mb, 250);
}

TEST(DynamicBatch, StartsAJobSmallerOnAFreeSliceRatherThanLetItWait) {
  // 2g.10gb is busy; the queued job needs 10 GB at batch 64: the ordering policy alone leaves it waiting.
  JobView busy = resizable(1, "1g.5gb", 64, 16);
  busy.slots = {0};
  const ClusterView v = view_of({mig("gpu0/a", 2, 10), mig("gpu0/b", 1, 5)}, {busy, resizable(2, "10gb", 64, 16)});
  EXPECT_TRUE(make_policy("fifo").decide(v).starts.empty());
  const Decisions d = make_policy("fifo+dynbatch").decide(v);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 2);
  EXPECT_EQ(d.starts[0].slots, std::vector<int>{1});
  ASSERT_EQ(d.resizes.size(), 1u);
  EXPECT_EQ(d.resizes[0].job, 2);
  EXPECT_EQ(d.resizes[0].batch_size, 21);  // the largest batch 5 GB holds by the prior
}

TEST(DynamicBatch, TakesTheFreeSliceThatHoldsTheLargestBatch) {
  const ClusterView v = view_of({mig("a", 1, 5), mig("b", 1, 8), mig("c", 1, 6)}, {resizable(7, "10gb:1", 64, 16)});
  const Decisions d = add_dynamic_batch(v, {}, {7});
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].slots, std::vector<int>{1});
  EXPECT_EQ(d.resizes.at(0).batch_size, (8192 - 2560) / 120);
}

TEST(DynamicBatch, GangsShrinkToAnEvenBatchAndNeverBelowTheLeast) {
  const ClusterView v = view_of({mig("a", 1, 5), mig("b", 1, 5)}, {resizable(3, "10gb:2", 64, 16)});
  const Decisions d = add_dynamic_batch(v, {}, {3});
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].slots.size(), 2u);
  EXPECT_EQ(d.resizes.at(0).batch_size, 20);
  const ClusterView tight = view_of({mig("a", 1, 5), mig("b", 1, 5)}, {resizable(3, "10gb:2", 64, 32)});
  EXPECT_TRUE(add_dynamic_batch(tight, {}, {3}).starts.empty());
}

TEST(DynamicBatch, GrowsARunningJobBackWhenItsSliceHoldsMore) {
  JobView shrunk = resizable(4, "10gb", 64, 16);
  shrunk.batch_size = 21;
  shrunk.slots = {0};
  JobView full = resizable(5, "10gb", 64, 16);
  full.slots = {1};
  // Moved to a 3g.20gb slice (job 4), and one already at its configured batch (job 5).
  const ClusterView v = view_of({mig("a", 3, 20), mig("b", 2, 10)}, {shrunk, full});
  const Decisions d = add_dynamic_batch(v, {}, {});
  ASSERT_EQ(d.resizes.size(), 1u);
  EXPECT_EQ(d.resizes[0].job, 4);
  EXPECT_EQ(d.resizes[0].batch_size, 64);  // back to its configured batch, not beyond
  // Still on 5 GB: nothing to grow into.
  shrunk.slots = {0};
  const ClusterView small = view_of({mig("a", 1, 5)}, {shrunk});
  EXPECT_TRUE(add_dynamic_batch(small, {}, {}).resizes.empty());
}

TEST(DynamicBatch, LeavesAloneWhatItShouldNot) {
  const std::vector<Slot> slots = {mig("a", 1, 5)};
  // While the ordering policy preempts (room being made for someone), nothing starts smaller.
  Decisions preempting;
  preempting.preemptions.push_back({9, "for job 1"});
  EXPECT_TRUE(add_dynamic_batch(view_of(slots, {resizable(2, "10gb", 64, 16)}), preempting, {2}).starts.empty());
  // A job whose slots are being made waits for them.
  ClusterView awaiting = view_of(slots, {resizable(2, "10gb", 64, 16)});
  awaiting.awaiting = {2};
  EXPECT_TRUE(add_dynamic_batch(awaiting, {}, {2}).starts.empty());
  // A job a MIG plan left waiting starts smaller on no reshapable slot (the plan gives it one), on others yes.
  std::vector<Slot> reshapable = slots;
  reshapable[0].reshapable = true;
  ClusterView waiting = view_of(reshapable, {resizable(2, "10gb", 64, 16)});
  waiting.plan_waiting = {2};
  EXPECT_TRUE(add_dynamic_batch(waiting, {}, {2}).starts.empty());
  waiting.slots = slots;
  EXPECT_EQ(add_dynamic_batch(waiting, {}, {2}).starts.size(), 1u);
  // A job that is not resizable, a slot reserved for another job, and a stopping job's growth.
  JobView fixed = resizable(3, "10gb", 64, 16);
  fixed.configured_batch = fixed.min_batch_size = 0;
  EXPECT_TRUE(add_dynamic_batch(view_of(slots, {fixed}), {}, {3}).starts.empty());
  std::vector<Slot> reserved = slots;
  reserved[0].reserved_for = 8;
  EXPECT_TRUE(add_dynamic_batch(view_of(reserved, {resizable(2, "10gb", 64, 16)}), {}, {2}).starts.empty());
  // One reserved for the job itself (a MIG plan made it for its smaller batch) it takes, at the batch it holds.
  reserved[0].reserved_for = 2;
  const Decisions own = add_dynamic_batch(view_of(reserved, {resizable(2, "10gb", 64, 16)}), {}, {2});
  ASSERT_EQ(own.starts.size(), 1u);
  EXPECT_EQ(own.resizes.at(0).batch_size, 21);
  JobView stopping = resizable(4, "10gb", 64, 16);
  stopping.batch_size = 16;
  stopping.slots = {0};
  stopping.stopping = true;
  EXPECT_TRUE(add_dynamic_batch(view_of({mig("big", 7, 40)}, {stopping}), {}, {}).resizes.empty());
}

TEST(DynamicBatch, TheOrderingPolicyStillComesFirst) {
  // The job ahead fits the free 2g.10gb at its own batch and takes it; the next one starts smaller on 1g.5gb.
  const ClusterView v = view_of({mig("a", 2, 10), mig("b", 1, 5)},
                                {resizable(1, "10gb", 64, 16), resizable(2, "10gb", 64, 16)});
  const Decisions d = make_policy("fifo+dynbatch").decide(v);
  ASSERT_EQ(d.starts.size(), 2u);
  EXPECT_EQ(d.starts[0].job, 1);
  EXPECT_EQ(d.starts[0].slots, std::vector<int>{0});
  EXPECT_EQ(d.starts[1].job, 2);
  EXPECT_EQ(d.starts[1].slots, std::vector<int>{1});
  ASSERT_EQ(d.resizes.size(), 1u);
  EXPECT_EQ(d.resizes[0].job, 2);
}

TEST(PolicySpec, DynamicBatchSuffixRoundTripsOnAnyOrder) {
  for (const char* s : {"fifo+dynbatch", "las(thresholds=3600:36000)+dynbatch", "priority(aging=2,preempt=1)+dynbatch"}) {
    EXPECT_EQ(to_string(parse_policy_spec(s)), s);
    EXPECT_TRUE(make_policy(s).spec.dynamic_batch) << s;
  }
  EXPECT_FALSE(make_policy("fifo").spec.dynamic_batch);
  for (const char* bad : {"fifo+dyn", "fifo+", "+dynbatch", "fifo+dynbatch+dynbatch"}) {
    try {
      make_policy(bad);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(bad));
    }
  }
}

}  // namespace
}  // namespace ragmig::sched
