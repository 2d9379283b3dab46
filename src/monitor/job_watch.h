// What the monitor knows of one job from its worker's events and its attempts' ends: progress, loss,
// checkpoints, out-of-memory exits, failures. Folded one event at a time by plain functions, so the running
// scheduler and `ragmig status` (from the store's copy of the events) build the same picture.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ragmig::monitor {

struct JobWatch {
  int64_t max_steps = 0;           ///< the run's train.max_steps (its start event's config); 0 unknown
  int64_t step = -1;
  double attempt_started_at = 0;   ///< the current attempt's start event
  double last_progress_at = 0;     ///< the last progress (or start) event of this attempt; 0: none yet
  double progress_interval_s = 0;  ///< the usual time between progress events (smoothed); 0 unknown
  double step_time_s = 0;          ///< the usual seconds per step (smoothed); 0 unknown
  int progress_events = 0;         ///< in this attempt
  std::optional<double> loss;      ///< the last reported loss
  double lowest_loss = std::numeric_limits<double>::infinity();  ///< the lowest loss of this attempt
  bool loss_not_finite = false;    ///< the worker said its loss became NaN or infinite
  std::string loss_text;           ///< that loss as the worker wrote it ("nan", "inf")
  double samples_per_s = 0;
  /// The last progress event's message, this attempt: what a worker without steps is doing (`ragmig eval`'s
  /// lines: "embedding 5183 passages", "embedded 2048 of 5183 passages").
  std::string message;
  double rss_mb = 0;
  int64_t checkpoint_step = -1;
  double checkpoint_at = 0;        ///< when the newest checkpoint was written; 0: none
  int64_t preemptions = 0;         ///< attempts stopped by the scheduler (preempted, moved)
  double oom_at = 0;               ///< when an attempt last ran out of memory; 0: never
  std::string oom_detail;
  std::vector<double> failures_at; ///< when attempts failed or were lost (not unavailable), oldest first
  double finished_at = 0;          ///< the worker's done event
};

/// Folds one worker event (a line of events.jsonl, parsed). Its "time" field dates it; `received_at` stands in
/// when there is none. Events it does not know are ignored.
void fold_event(JobWatch& watch, const nlohmann::json& event, double received_at);

/// Folds how an attempt ended: `outcome` is the store's (done | preempted | failed | lost | unavailable |
/// cancelled; unavailable: the executor could not reach what runs jobs, so it never started — no failure); a
/// SIGKILL that the scheduler did not send is most likely the kernel's out-of-memory killer.
void fold_attempt_end(JobWatch& watch, const std::string& outcome, int64_t exit_code, int64_t signal, double at);

/// Seconds until the job's last step at its usual step time; nullopt when either is unknown.
std::optional<double> eta_seconds(const JobWatch& watch);

}  // namespace ragmig::monitor
