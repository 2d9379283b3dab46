// The scheduler's durable state: SQLite (WAL) in the state folder, default ./.ragmig/state.db. Jobs,
// attempts, every state transition with its time and reason, and the workers' events. Each state change
// is one transaction, so a scheduler killed at any moment leaves a consistent store to restart from.
// `ragmig submit`, `status` and `cancel` open the same file while `ragmig run` runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/job.h"

namespace ragmig::sched {

class Db;

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

class Store {
 public:
  enum class Mode { Create, MustExist };
  /// Opens `state_dir`/state.db, creating the folder and the schema (Create), or refusing with DataError
  /// when there is no store yet (MustExist: `status` and `cancel` on a mistyped --state). Throws IoError.
  explicit Store(const std::string& state_dir, Mode mode = Mode::Create);
  /// A store that lives in this process only (SQLite ":memory:" without journal or syncing, used from one
  /// thread): the simulator replays whole traces through the same store code. A transaction that is not
  /// committed is not rolled back (there is no journal): every writer here either commits or has changed
  /// nothing. run_dir() names folders under `run_root`, which is never created.
  /// History::Drop keeps no transition log (transitions() is empty), slot status (slots()) or scheduler
  /// heartbeat (scheduler_info()): the simulator reads only job times, nobody else reads its store, and
  /// those writes were over a fifth of a Philly replay.
  enum class History { Keep, Drop };
  static std::unique_ptr<Store> in_memory(const std::string& run_root, History history = History::Keep);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& dir() const { return dir_; }
  /// The job's run folder: <state>/runs/<id>.
  std::string run_dir(JobId id) const;

  /// Adds a queued job; returns its id. Throws ConfigError if the spec is invalid.
  JobId submit(const JobSpec& spec, double now);
  /// A queued job is cancelled at once; a running one is marked and stopped by the scheduler.
  /// Throws DataError for an unknown id.
  CancelResult request_cancel(JobId id, double now);

  std::optional<JobRecord> job(JobId id);
  /// Every job (active_only: queued and running), in id order.
  std::vector<JobRecord> jobs(bool active_only);
  std::vector<AttemptRecord> attempts(JobId id);
  /// How many jobs are in each state (absent: none).
  std::map<JobState, int64_t> count_by_state();
  /// Every job's times, in id order (no spec is parsed: cheap for hundreds of thousands of jobs).
  std::vector<JobTimes> job_times();
  /// Attempts with no end, whatever their job's state (reconciliation after a crash).
  std::vector<AttemptRecord> open_attempts();

  /// True when another connection committed since the last call (new jobs, cancel requests).
  bool changed_elsewhere();

  /// queued -> running with a new attempt on `slots`, if the job is still queued and not cancelled;
  /// returns the attempt id, or nullopt when someone changed the job first.
  std::optional<int64_t> start_attempt(JobId id, const std::vector<std::string>& slots, double now);
  void set_attempt_pid(int64_t attempt_id, int64_t pid);
  /// Closes the attempt and moves its job to end.next, in one transaction. Returns false (and changes
  /// nothing) when the attempt was closed already.
  bool finish_attempt(JobId id, int64_t attempt_id, const AttemptEnd& end, double now);
  /// Sets a queued job's reason (why it waits: "unrunnable: ..."); a job in another state is left alone.
  void set_reason(JobId id, const std::string& reason);
  /// Records that a running job is being stopped (preemption or cancel), as a transition-log entry.
  void note(JobId id, const std::string& what, double now);

  /// Appends worker events (JSON lines) and the new file offset and progress, in one transaction.
  void record_events(JobId id, int64_t attempt_id, const std::vector<std::string>& lines, int64_t new_offset,
                     const ProgressUpdate& progress);
  /// A job's stored events, oldest first.
  std::vector<std::string> events(JobId id);
  /// The events one attempt of a job wrote, oldest first.
  std::vector<std::string> attempt_events(JobId id, int64_t attempt_id);
  /// The events stored after `after_seq` (a seq from an earlier call; 0 = all), oldest first: a reader that
  /// follows a job pays for what is new only.
  struct StoredEvent {
    int64_t seq = 0;
    std::string body;
  };
  std::vector<StoredEvent> events_after(JobId id, int64_t after_seq);

  /// The state transitions of a job: "from -> to (reason)" with times.
  struct Transition {
    std::string from, to, reason;
    double at = 0;
  };
  std::vector<Transition> transitions(JobId id);

  /// Alerts the monitor raised and cleared (JSON bodies, monitor/alert_rules.h), oldest first after `after_seq`.
  void record_alert(const std::string& body, double at);
  std::vector<StoredEvent> alerts(int64_t after_seq = 0);

  void write_slots(const std::vector<SlotStatus>& slots);
  /// Replaces the rows of these slots only (by id), leaving the others as they are.
  void update_slots(const std::vector<SlotStatus>& slots);
  std::vector<SlotStatus> slots();
  /// The running scheduler's heartbeat: pid, policy, time and where its /metrics listens ("" for nowhere),
  /// for `status`.
  void set_scheduler_info(int64_t pid, const std::string& policy, double now, const std::string& metrics_url = "");
  struct SchedulerInfo {
    int64_t pid = 0;
    std::string policy;
    double heartbeat = 0;
    std::string metrics_url;
  };
  std::optional<SchedulerInfo> scheduler_info();

 private:
  struct InMemory {};
  Store(const std::string& run_root, InMemory, History history);
  void use_wal();  ///< switches a state.db to WAL once, retrying while another process holds it
  void create_schema(bool state_index);
  void transition(JobId id, const std::string& from, const std::string& to, const std::string& reason, double now);

  std::string dir_;
  std::string runs_dir_;  ///< <dir>/runs/, which run_dir() appends to (often: once per start)
  std::unique_ptr<Db> db_;
  int64_t seen_version_ = -1;
  bool keep_history_ = true;
  bool in_memory_ = false;
};

/// "./.ragmig", or $RAGMIG_STATE when set.
std::string default_state_dir();
/// <state>/scheduler.lock: held by the one scheduler running on a state folder.
std::string scheduler_lock_path(const std::string& state_dir);

}  // namespace ragmig::sched
