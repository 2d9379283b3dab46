// The scheduler's prices for the jobs that state their work in FLOPs (JobSpec::work: `ragmig submit` counts a
// `ragmig train` command's): each one's estimate_s is its FLOPs at the rate the jobs' own progress events measure
// (work_rate.h), so that sjf, ljf and srtf order training jobs by their size without anyone guessing seconds, and
// the MIG planner and the monitor's queue estimate see how long they will take; a running job by its own
// progress and speed, so that what it has left (estimate_s - work_s: srtf, the MIG planner) follows its steps and
// a resize. Pure: fed events, asked prices.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "sched/job.h"
#include "sched/job_event.h"
#include "sched/work_rate.h"

namespace ragmig::sched {

class WorkPricer {
 public:
  /// A worker's event of job `id`, of `work`, on slots of `speed` (a gang's slowest), seen when the job had
  /// attained `attained_s` of work (JobView::work_s): "start" (a new attempt) opens a new window, and one that
  /// resumes (its step, a checkpoint's) says where the job is again; "progress" with step, time and batch_size
  /// extends the window, measures the job's rate and says where the job is.
  void on_event(JobId id, const JobSpec::Work& work, const nlohmann::json& event, double speed, double attained_s);
  /// A job that left the queue for good: its window and progress go (its rate stays in the median).
  void forget(JobId id) { jobs_.erase(id); }

  /// FLOP/s on a speed-1 slot: the median over the jobs measured so far of each one's latest; nullopt before any.
  std::optional<double> rate() const { return rate_; }
  /// The estimate job `id` of `work` (flops > 0) should have instead of `estimate_s`, at its own measured rate,
  /// else at like_rate(), else at `unmeasured` (unmeasured_rate() of the queue's FLOPs): a job that stated its
  /// steps and reported progress, the work it had attained then plus what is left of its steps at the batch it
  /// reported and its evaluations (all of them: which ones are behind it is not known); any other job, all its
  /// FLOPs. nullopt while estimate_s is within 10 % of that (reprice()), so that a steady rate rewrites nothing.
  std::optional<double> new_estimate(JobId id, const JobSpec::Work& work, double estimate_s, double unmeasured) const;
  /// The rate a job of `work` that has not measured its own trains at: the median over the measured jobs whose
  /// FLOPs per sample are within 2x of its own (a model of its size on texts of its lengths: a small encoder's
  /// steps reach fewer FLOP/s than a large one's), else rate(); nullopt before any measurement.
  std::optional<double> like_rate(const JobSpec::Work& work) const;

 private:
  struct Job {
    ProgressWindow window;
    int64_t step = -1;      ///< the latest progress event's, or a resuming start's (-1: none yet)
    int64_t batch_size = 0;
    double attained_s = 0;  ///< the job's work_s when it came
  };
  struct Measured {
    double rate = 0;        ///< its latest
    double per_sample = 0;  ///< its step FLOPs per sample
  };
  void on_start(Job& job, const JobSpec::Work& work, const JobEvent& event, double attained_s);

  std::unordered_map<JobId, Job> jobs_;
  std::unordered_map<JobId, Measured> rates_;  ///< every measured job's
  std::optional<double> rate_;
  mutable std::unordered_map<double, double> like_rates_;  ///< like_rate() by FLOPs per sample, until a rate moves
};

}  // namespace ragmig::sched
