// The exact job-to-instance assignment (min-cost flow) against brute force on random small problems.
#include <gtest/gtest.h>

#include "core/splitmix.h"
#include "gpu/assignment.h"

namespace ragmig::gpu {
namespace {

TEST(Assignment, MatchesBruteForceOnRandomProblems) {
  uint64_t state = 42;
  const auto draw = [&](uint64_t n) { return splitmix64(state++) % n; };
  for (int trial = 0; trial < 400; ++trial) {
    const size_t classes = 1 + draw(4);
    const size_t slots = draw(7);
    std::vector<std::vector<int64_t>> value(classes, std::vector<int64_t>(slots));
    std::vector<int> count(classes);
    for (size_t c = 0; c < classes; ++c) {
      count[c] = static_cast<int>(draw(4));
      for (size_t s = 0; s < slots; ++s) value[c][s] = draw(3) == 0 ? -1 : static_cast<int64_t>(1 + draw(100));
    }
    const auto fast = best_assignment(value, count);
    const auto slow = best_assignment_brute_force(value, count);
    ASSERT_EQ(fast.size(), slots);
    ASSERT_EQ(assignment_value(value, fast), assignment_value(value, slow)) << "trial " << trial;
    // Feasible: counts respected, only allowed placements.
    std::vector<int> used(classes, 0);
    for (size_t s = 0; s < slots; ++s) {
      if (fast[s] < 0) continue;
      ASSERT_GT(value[static_cast<size_t>(fast[s])][s], 0);
      ++used[static_cast<size_t>(fast[s])];
    }
    for (size_t c = 0; c < classes; ++c) ASSERT_LE(used[c], count[c]);
  }
}

TEST(Assignment, PrefersTheMoreValuableJobWhenSlotsAreScarce) {
  // One slot, two classes: the higher value wins even though both fit.
  EXPECT_EQ(best_assignment({{5}, {9}}, {1, 1}), (std::vector<int>{1}));
  // Class 0 fits only slot 0; class 1 fits both: the exact solver places both, greedy-by-value would not.
  EXPECT_EQ(best_assignment({{10, -1}, {11, 10}}, {1, 1}), (std::vector<int>{0, 1}));
  EXPECT_EQ(best_assignment({{3, 3}}, {0}), (std::vector<int>{-1, -1}));
}

}  // namespace
}  // namespace ragmig::gpu
