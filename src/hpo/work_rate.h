// How fast a sweep's trials train, measured from their own progress events, in FLOP per second on a slot of
// speed 1 (sched::Slot::speed): the rate that prices each trial's FLOPs (train/work_estimate.h) as its
// JobSpec::estimate_s, the seconds that sjf, ljf, srtf and the monitor's queue estimate work in. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ragmig::hpo {

/// Until a trial has measured the rate, the median trial is priced at what the scheduler assumes of a job of
/// unknown length (exec::RebalanceOptions::unknown_remaining_s: an hour), the others in proportion to their FLOPs:
/// their order is right from the first pass, and the MIG planner sees the lengths it assumed before trials had
/// estimates.
inline constexpr double kUnmeasuredMedianTrialSeconds = 3600;

/// The rate that prices the median of `trial_flops` at kUnmeasuredMedianTrialSeconds (0 for none).
double unmeasured_rate(std::vector<double> trial_flops);

/// A trial's progress events within one attempt at one batch size, from the first to the latest: its training
/// speed, with its start (loading the model and the data) left out.
class ProgressWindow {
 public:
  /// A new attempt (its "start" event): the next progress event opens a new window.
  void restart() { open_ = false; }
  /// A progress event: the step it reached, its time (seconds), the batch the trial trains at. A batch other than
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

/// The sweep's rate: the median of its trials' rates (nullopt for none).
std::optional<double> sweep_rate(std::vector<double> rates);

/// Whether estimates priced at `applied` FLOP/s are priced again at `measured`: when they differ by more than
/// 10 %, so that a steady rate does not rewrite every trial's estimate on every pass.
bool reprice(double applied, double measured);

}  // namespace ragmig::hpo
