// A job that failed waits out its back-off before it runs again, and the scheduler says until when
// (Scheduler::next_retry_at): a loop that does not pass every tick (the simulator under a policy that does not
// preempt) wakes for it.
#include <gtest/gtest.h>

#include <filesystem>

#include "sched/scheduler.h"
#include "sched/scripted_executor.h"
#include "sched/store.h"

namespace ragmig::sched {
namespace {

TEST(SchedulerRetry, AFailedJobSaysWhenItMayStartAgain) {
  const auto store = Store::in_memory((std::filesystem::temp_directory_path() / "ragmig-retry").string());
  ScriptedExecutor executor;
  StepClock clock;
  SchedulerOptions options;
  options.backoff_s = 30;
  Slot slot;
  slot.id = "cpu:0";
  Scheduler scheduler(*store, executor, clock, {slot}, options);
  JobSpec spec;
  spec.name = "flaky";
  spec.argv = {"flaky"};
  spec.need = parse_need("cpu:1");
  const JobId id = scheduler.submit(spec);
  scheduler.step();
  ASSERT_EQ(executor.started.size(), 1u);
  EXPECT_FALSE(scheduler.next_retry_at()) << "running, nothing backing off";

  clock.t = 1010;
  executor.finish(id, 1);
  scheduler.step();
  ASSERT_EQ(store->job(id)->state, JobState::Queued);
  ASSERT_TRUE(scheduler.next_retry_at());
  EXPECT_DOUBLE_EQ(*scheduler.next_retry_at(), 1040);
  clock.t = 1039;
  scheduler.step();
  EXPECT_EQ(executor.started.size(), 1u) << "still backing off";
  clock.t = *scheduler.next_retry_at();
  scheduler.step();
  EXPECT_EQ(executor.started.size(), 2u);
  EXPECT_FALSE(scheduler.next_retry_at());

  // The second failure backs off twice as long; a cancelled job waits for nothing.
  clock.t = 1050;
  executor.finish(id, 1);
  scheduler.step();
  EXPECT_DOUBLE_EQ(scheduler.next_retry_at().value_or(0), 1110);
  scheduler.cancel(id, "not needed");
  scheduler.step();
  EXPECT_FALSE(scheduler.next_retry_at());
}

}  // namespace
}  // namespace ragmig::sched
