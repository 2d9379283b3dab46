// How fast training jobs train, measured from their own progress events, in FLOP per second on a slot of
// speed 1 (Slot::speed): the rate that prices a job's FLOPs (JobSpec::work; train/work_estimate.h counts them)
// as its JobSpec::estimate_s, the seconds that sjf, ljf, srtf and the monitor's queue estimate work in. The
// scheduler prices the jobs that state their work with it (work_pricer.h); a sweep reports its trials' rate
// (hpo/sweep_driver.h). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ragmig::sched {

/// Until a job has measured the rate, the median job is priced at what the scheduler assumes of a job of
/// unknown length (exec::RebalanceOptions::unknown_remaining_s: an hour), the others in proportion to their FLOPs:
/// their order is right from the first pass, and the MIG planner sees the lengths it assumed before jobs had
/// estimates.
inline constexpr double kUnmeasuredMedianJobSeconds = 3600;

/// The rate that prices the median of `job_flops` at kUnmeasuredMedianJobSeconds (0 for none).
double unmeasured_rate(std::vector<double> job_flops);

/// A job's progress events within one attempt at one batch size, from the first to the latest: its training
/// speed, with its start (loading the model and the data) left out.
class ProgressWindow {
 public:
  /// A new attempt (its "start" event): the next progress event opens a new window.
  void restart() { open_ = false; }
  /// A progress event: the step it reached, its time (seconds), the batch the job trains at. A batch other than
  /// the window's (a resize) or a step not past its last opens a new window at this event.
  void add(int64_t step, double time, int64_t batch_size);
  /// FLOP/s on a speed-1 slot: `step_flops` (one step at `configured_batch`, scaled to the window's batch) x the
  /// steps trained / (the seconds they took x `speed`); nullopt until the window spans a step and some time.
  std::optional<double> rate(double step_flops, int64_t configured_batch, double speed) const;

 private:
  bool open_ = false;
  int64_t first_step_ = 0, last_step_ = 0, batch_size_ = 0;
  double first_time_ = 0, last_time_ = 0;
};

/// The rate of a set of jobs (a sweep's trials, a scheduler's jobs): the median of theirs (nullopt for none), so
/// that one slow or fast job does not move it far.
std::optional<double> median_rate(std::vector<double> rates);

/// Whether estimates priced at `applied` are priced again at `measured` (rates, or the estimates themselves):
/// when they differ by more than 10 %, so that a steady rate does not rewrite every job's estimate on every pass.
bool reprice(double applied, double measured);

}  // namespace ragmig::sched
