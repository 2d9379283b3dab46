// The metrics as pure functions of hand-made outcomes.
#include <gtest/gtest.h>

#include "sim/metrics.h"

namespace ragmig::sim {
namespace {

TEST(Metrics, Quantiles) {
  EXPECT_EQ(quantile({}, 0.5), 0);
  EXPECT_EQ(quantile({7}, 0.99), 7);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.95), 4.8);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 1), 5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0), 1);
}

TEST(Metrics, Summary) {
  // JCTs 10, 4, 6, 10; first arrival 0, last end 12; 22 busy slice-seconds of 2 x 12.
  const std::vector<JobOutcome> o = {{0, 10, 0}, {0, 4, 0}, {1, 7, 3}, {2, 12, 5}};
  const Metrics m = summarize(o, 22, 2);
  EXPECT_EQ(m.jobs, 4u);
  EXPECT_DOUBLE_EQ(m.avg_jct, 7.5);
  EXPECT_DOUBLE_EQ(m.median_jct, 8);
  EXPECT_DOUBLE_EQ(m.p95_jct, 10);
  EXPECT_DOUBLE_EQ(m.makespan, 12);
  EXPECT_DOUBLE_EQ(m.avg_queueing, 2);
  EXPECT_DOUBLE_EQ(m.utilization, 22.0 / 24.0);
  EXPECT_EQ(summarize({}, 0, 1).jobs, 0u);
}

}  // namespace
}  // namespace ragmig::sim
