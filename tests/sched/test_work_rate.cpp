// The rate training jobs train at, from their progress events: a window per attempt and batch size that
// leaves the start out, scaled by the slot's speed and the batch; the median over jobs; repricing only on a
// real change.
#include "sched/work_rate.h"

#include <gtest/gtest.h>

namespace ragmig::sched {
namespace {

TEST(WorkRate, AWindowMeasuresFlopsPerSecondFromItsFirstProgressEvent) {
  ProgressWindow w;
  EXPECT_FALSE(w.rate(1e9, 32, 1.0));
  w.add(5, 100.0, 32);  // the first event: the model and data loading before it are not counted
  EXPECT_FALSE(w.rate(1e9, 32, 1.0)) << "one event spans no time";
  w.add(10, 102.0, 32);
  w.add(15, 104.0, 32);
  ASSERT_TRUE(w.rate(1e9, 32, 1.0));
  EXPECT_DOUBLE_EQ(*w.rate(1e9, 32, 1.0), 10 * 1e9 / 4.0);
  // On a slot of speed 3/7 the same seconds are 3/7 of a speed-1 slot's: the rate of a whole one is higher.
  EXPECT_DOUBLE_EQ(*w.rate(1e9, 32, 3.0 / 7), 10 * 1e9 / (4.0 * 3 / 7));
  EXPECT_FALSE(w.rate(0, 32, 1.0));
  EXPECT_FALSE(w.rate(1e9, 0, 1.0));
}

TEST(WorkRate, AResizeOrANewAttemptOpensANewWindow) {
  ProgressWindow w;
  w.add(5, 100.0, 32);
  w.add(10, 110.0, 32);
  w.add(15, 111.0, 16);  // resized to 16: this event opens a window at the new batch
  EXPECT_FALSE(w.rate(1e9, 32, 1.0));
  w.add(25, 113.0, 16);
  // 10 steps of half the configured batch in 2 s.
  EXPECT_DOUBLE_EQ(*w.rate(1e9, 32, 1.0), 10 * 0.5e9 / 2.0);
  w.restart();  // preempted and started again: its start is not training
  w.add(30, 500.0, 16);
  EXPECT_FALSE(w.rate(1e9, 32, 1.0));
  w.add(35, 501.0, 16);
  EXPECT_DOUBLE_EQ(*w.rate(1e9, 32, 1.0), 5 * 0.5e9 / 1.0);
  w.add(20, 502.0, 16);  // a step not past the last (resumed from an earlier checkpoint): a new window
  EXPECT_FALSE(w.rate(1e9, 32, 1.0));
}

TEST(WorkRate, TheRateIsTheMedianOfTheJobs) {
  EXPECT_FALSE(median_rate({}));
  EXPECT_EQ(*median_rate({7}), 7);
  EXPECT_EQ(*median_rate({9, 1, 5}), 5);
  EXPECT_EQ(*median_rate({8, 1, 2, 100}), 5);  // one slow or fast job does not move it far
}

TEST(WorkRate, UnmeasuredTheMedianJobIsAnHour) {
  EXPECT_EQ(unmeasured_rate({}), 0);
  EXPECT_DOUBLE_EQ(unmeasured_rate({7.2e12}), 2e9);
  EXPECT_DOUBLE_EQ(unmeasured_rate({1e9, 3.6e13, 7.2e14}), 1e10);
  EXPECT_EQ(kUnmeasuredMedianJobSeconds, 3600);
}

TEST(WorkRate, EstimatesArePricedAgainOnlyWhenTheRateMovesMoreThanTenPercent) {
  EXPECT_TRUE(reprice(1e6, 2e10));
  EXPECT_FALSE(reprice(2e10, 2.1e10));
  EXPECT_FALSE(reprice(2e10, 1.85e10));
  EXPECT_TRUE(reprice(2e10, 2.3e10));
  EXPECT_TRUE(reprice(2e10, 1.7e10));
}

}  // namespace
}  // namespace ragmig::sched
