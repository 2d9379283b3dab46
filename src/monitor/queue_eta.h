// When the queue should be done: the running jobs' remaining time and the queued jobs' expected time laid
// onto the slots in order, each job on the slot that frees first (list scheduling). A plain function of
// estimates; the deadline alert compares its answer with [alerts] deadline.
#pragma once

#include <cstddef>
#include <vector>

namespace ragmig::monitor {

/// The time the last job should finish: `running_remaining_s` occupy slots from `now`, then each of
/// `queued_s` in order takes the slot that frees first. `slots` >= 1.
double queue_finish_at(double now, const std::vector<double>& running_remaining_s, const std::vector<double>& queued_s,
                       size_t slots);

}  // namespace ragmig::monitor
