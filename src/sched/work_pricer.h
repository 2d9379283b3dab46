// The scheduler's prices for the jobs that state their work in FLOPs (JobSpec::work: `ragmig submit` counts a
// `ragmig train` command's): each one's estimate_s is its FLOPs at the rate the jobs' own progress events measure
// (work_rate.h), so that sjf, ljf and srtf order training jobs by their size without anyone guessing seconds, and
// the MIG planner and the monitor's queue estimate see how long they will take. Pure: fed events, asked prices.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "sched/job.h"
#include "sched/work_rate.h"

namespace ragmig::sched {

class WorkPricer {
 public:
  /// A worker's event of job `id`, of `work`, on slots of `speed` (a gang's slowest): "start" (a new attempt)
  /// opens a new window; "progress" with step, time and batch_size extends it and measures the job's rate.
  void on_event(JobId id, const JobSpec::Work& work, const nlohmann::json& event, double speed);
  /// A job that left the queue for good: its window goes (its rate stays in the median).
  void forget(JobId id) { windows_.erase(id); }

  /// FLOP/s on a speed-1 slot: the median over the jobs measured so far of each one's latest; nullopt before any.
  std::optional<double> rate() const { return rate_; }
  /// The estimate a job of `work` (flops > 0) should have instead of `estimate_s`: its FLOPs at rate(), or
  /// before any measurement at `unmeasured` (unmeasured_rate() of the queue's FLOPs); nullopt while estimate_s is
  /// within 10 % of that (reprice()), so that a steady rate rewrites nothing.
  std::optional<double> new_estimate(const JobSpec::Work& work, double estimate_s, double unmeasured) const;

 private:
  std::unordered_map<JobId, ProgressWindow> windows_;
  std::unordered_map<JobId, double> rates_;  ///< every measured job's latest rate
  std::optional<double> rate_;
};

}  // namespace ragmig::sched
