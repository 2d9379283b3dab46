// The job table: what the scheduler loop reads and writes about jobs and their attempts. Two kinds: the
// durable SQLite store (store.h) that `ragmig run`, `submit`, `status` and `cancel` share, and the simulator's
// table in memory (sim/memory_jobs.h), which keeps the same rows and follows the same rules without SQL: the
// scheduler cannot tell them apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/job.h"

namespace ragmig::sched {

/// The running scheduler's heartbeat, for `ragmig status`.
struct SchedulerInfo {
  int64_t pid = 0;
  std::string policy;
  double heartbeat = 0;     ///< when it was written
  std::string metrics_url;  ///< where its /metrics listens; "" for nowhere
  /// The median FLOP/s its jobs measured (sched/work_pricer.h); none yet: the estimates of stated work are the
  /// placeholder (the median job an hour) until a job reports progress.
  std::optional<double> work_rate;
};

/// A job row with its open attempt (when running) and the progress its worker last reported.
struct JobRecord {
  JobId id = 0;
  JobSpec spec;
  JobState state = JobState::Queued;
  double submitted_at = 0;
  double queued_since = 0;    ///< when it last became queued
  double waited_s = 0;        ///< queued time before queued_since (add now - queued_since while queued)
  double not_before = 0;      ///< back-off: not started before this time
  double service_s = 0;       ///< attained service of finished attempts (seconds x slots)
  double work_s = 0;          ///< work of finished attempts (seconds x slot speed)
  int64_t attempts = 0;
  int64_t failures = 0;
  bool cancel_requested = false;
  std::string reason;         ///< why it last failed, was requeued or cancelled
  double finished_at = 0;     ///< terminal states only
  int64_t step = -1;          ///< from the worker's last progress event
  double samples_per_s = 0;
  int64_t checkpoint_step = -1;
  int64_t events_offset = 0;  ///< bytes of <run>/events.jsonl already copied into the store
  // The open attempt of a running job.
  int64_t attempt_id = 0;
  int64_t attempt_number = 0;
  std::vector<std::string> slots;  ///< slot ids, one per replica
  double started_at = 0;
  int64_t pid = 0;            ///< the attempt's process (group leader); 0 until recorded
};

/// A job's times without its spec: what reports and the simulator's metrics read for every job.
struct JobTimes {
  JobId id = 0;
  JobState state = JobState::Queued;
  double submitted_at = 0;
  double finished_at = 0;     ///< terminal states only
  double waited_s = 0;        ///< queued time up to queued_since (running or finished jobs: all of it)
  double service_s = 0;
  int64_t attempts = 0;
};

struct AttemptRecord {
  int64_t id = 0;
  JobId job = 0;
  int64_t number = 0;
  std::vector<std::string> slots;
  double started_at = 0;
  double ended_at = 0;        ///< 0 while open
  int64_t pid = 0;
  int64_t exit_code = -1;     ///< -1 when killed by a signal or unknown
  int64_t signal = 0;
  std::string outcome;        ///< done | preempted | failed | lost | unavailable | cancelled; empty while open
};

/// How an attempt ended and what becomes of its job.
struct AttemptEnd {
  int64_t exit_code = -1;
  int64_t signal = 0;
  std::string outcome;        ///< done | preempted | failed | lost | unavailable | cancelled
  JobState next = JobState::Queued;
  std::string reason;
  double not_before = 0;      ///< when requeued after a failure: back-off
  double service_s = 0;       ///< service and work of this attempt, added to the job's totals
  double work_s = 0;
  bool failure = false;       ///< counts against max_retries
};

/// The last progress a worker reported, folded into the job row together with its events.
struct ProgressUpdate {
  std::optional<int64_t> step, checkpoint_step;
  std::optional<double> samples_per_s;
};

/// What `ragmig status` shows per slot, written by the running scheduler.
struct SlotStatus {
  std::string id, kind, profile, device;
  JobId job = 0;              ///< 0 when idle
  double utilization = -1;    ///< 0..1 of the slot used by its job, -1 unknown
  double updated_at = 0;
};

enum class CancelResult { Cancelled, Stopping, AlreadyFinished };

class JobTable {
 public:
  virtual ~JobTable() = default;

  /// The job's run folder.
  virtual std::string run_dir(JobId id) const = 0;
  /// Adds a queued job; returns its id. Throws ConfigError if the spec is invalid.
  virtual JobId submit(const JobSpec& spec, double now) = 0;
  /// A queued job is cancelled at once; a running one is marked and stopped by the scheduler.
  /// Throws DataError for an unknown id.
  virtual CancelResult request_cancel(JobId id, double now) = 0;

  virtual std::optional<JobRecord> job(JobId id) = 0;
  /// Every job (active_only: queued and running), in id order.
  virtual std::vector<JobRecord> jobs(bool active_only) = 0;
  /// Every job's times, in id order (no spec is parsed: cheap for hundreds of thousands of jobs).
  virtual std::vector<JobTimes> job_times() = 0;
  /// Attempts with no end, whatever their job's state (reconciliation after a crash).
  virtual std::vector<AttemptRecord> open_attempts() = 0;
  /// True when another process committed since the last call (new jobs, cancel requests).
  virtual bool changed_elsewhere() = 0;

  /// queued -> running with a new attempt on `slots`, if the job is still queued and not cancelled;
  /// returns the attempt id, or nullopt when someone changed the job first.
  virtual std::optional<int64_t> start_attempt(JobId id, const std::vector<std::string>& slots, double now) = 0;
  virtual void set_attempt_pid(int64_t attempt_id, int64_t pid) = 0;
  /// Closes the attempt and moves its job to end.next, in one step. Returns false (and changes nothing) when
  /// the attempt was closed already.
  virtual bool finish_attempt(JobId id, int64_t attempt_id, const AttemptEnd& end, double now) = 0;
  /// Sets a queued job's reason (why it waits: "unrunnable: ..."); a job in another state is left alone.
  virtual void set_reason(JobId id, const std::string& reason) = 0;
  /// Replaces a queued or running job's JobSpec::estimate_s (a sweep prices its trials once it has measured how
  /// fast they train); a finished job is left alone.
  virtual void set_estimate(JobId id, double estimate_s) = 0;
  /// Records that a running job is being stopped (preemption or cancel), or resized, in the transition log.
  virtual void note(JobId id, const std::string& what, double now) = 0;
  /// Takes the worker's new events (JSON lines), the new file offset and its progress, in one step.
  virtual void record_events(JobId id, int64_t attempt_id, const std::vector<std::string>& lines,
                             int64_t new_offset, const ProgressUpdate& progress) = 0;

  /// What `ragmig status` shows: every slot's row (write_slots), the rows of these slots only (update_slots),
  /// the running scheduler's heartbeat.
  virtual void write_slots(const std::vector<SlotStatus>& slots) = 0;
  virtual void update_slots(const std::vector<SlotStatus>& slots) = 0;
  virtual void set_scheduler_info(const SchedulerInfo& info) = 0;
};

}  // namespace ragmig::sched
