// Assigning jobs to free instances so that the total value is largest: a small transportation problem
// (job classes with counts on one side, instances taking one job each on the other), solved exactly by
// min-cost flow. A brute-force reference beside it checks it in the tests.
#pragma once

#include <cstdint>
#include <vector>

namespace ragmig::gpu {

/// value[c][s] is what one job of class c is worth on slot s; a negative value means "may not go there".
/// count[c] jobs of class c wait. Returns, per slot, the class placed on it or -1, such that each slot
/// holds at most one job, no class is used more than its count, and the summed value is the largest.
/// Only positive-value placements are ever made.
std::vector<int> best_assignment(const std::vector<std::vector<int64_t>>& value, const std::vector<int>& count);

/// The same by trying every assignment; exponential, for tests on small inputs only.
std::vector<int> best_assignment_brute_force(const std::vector<std::vector<int64_t>>& value,
                                             const std::vector<int>& count);

/// The summed value of an assignment returned by either function.
int64_t assignment_value(const std::vector<std::vector<int64_t>>& value, const std::vector<int>& slot_class);

}  // namespace ragmig::gpu
