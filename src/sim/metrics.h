// What a simulated run is judged by: job completion times (average, median, p95, p99), makespan, queueing
// delay and utilisation. Pure functions of the jobs' outcomes, so they are tested on hand-made numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ragmig::sim {

struct JobOutcome {
  double arrival = 0;
  double finished = 0;  ///< completion time
  double queued_s = 0;  ///< total time spent queued (first start, and again after each preemption)
};

struct Metrics {
  size_t jobs = 0;
  double avg_jct = 0, median_jct = 0, p95_jct = 0, p99_jct = 0;  ///< JCT = finished - arrival
  double makespan = 0;       ///< last completion - first arrival
  double avg_queueing = 0;   ///< mean of queued_s
  double utilization = 0;    ///< busy slice-seconds / (capacity slices x makespan)
};

/// The q-th quantile (0..1) of `values` by linear interpolation between the closest ranks (numpy's
/// default); 0 for no values.
double quantile(std::vector<double> values, double q);

/// Summarises outcomes; `busy_slice_seconds` and `capacity_slices` give the utilisation.
Metrics summarize(const std::vector<JobOutcome>& outcomes, double busy_slice_seconds, int capacity_slices);

}  // namespace ragmig::sim
