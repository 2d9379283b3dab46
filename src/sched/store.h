// The scheduler's durable state: SQLite (WAL) in the state folder, default ./.ragmig/state.db. Jobs,
// attempts, every state transition with its time and reason, the workers' events, slot status and alerts. Each state change
// is one transaction, so a scheduler killed at any moment leaves a consistent store to restart from.
// `ragmig submit`, `status` and `cancel` open the same file while `ragmig run` runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/job_table.h"

namespace ragmig::sched {

class Db;

class Store final : public JobTable {
 public:
  enum class Mode { Create, MustExist };
  /// Opens `state_dir`/state.db, creating the folder and the schema (Create), or refusing with DataError
  /// when there is no store yet (MustExist: `status` and `cancel` on a mistyped --state). Throws IoError.
  explicit Store(const std::string& state_dir, Mode mode = Mode::Create);
  /// A store that lives in this process only (SQLite ":memory:" without journal or syncing, used from one
  /// thread), for tests: the same SQL without a file. A transaction that is not committed is not rolled back
  /// (there is no journal): every writer here either commits or has changed nothing. run_dir() names folders
  /// under `run_root`, which is never created.
  static std::unique_ptr<Store> in_memory(const std::string& run_root);
  ~Store() override;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& dir() const { return dir_; }
  /// <state>/runs/<id>.
  std::string run_dir(JobId id) const override;

  JobId submit(const JobSpec& spec, double now) override;
  CancelResult request_cancel(JobId id, double now) override;

  std::optional<JobRecord> job(JobId id) override;
  std::vector<JobRecord> jobs(bool active_only) override;
  std::vector<AttemptRecord> attempts(JobId id);
  /// How many jobs are in each state (absent: none).
  std::map<JobState, int64_t> count_by_state();
  std::vector<JobTimes> job_times() override;
  std::vector<AttemptRecord> open_attempts() override;
  /// True when another connection committed since the last call.
  bool changed_elsewhere() override;

  /// In one transaction.
  std::optional<int64_t> start_attempt(JobId id, const std::vector<std::string>& slots, double now) override;
  void set_attempt_pid(int64_t attempt_id, int64_t pid) override;
  /// In one transaction.
  bool finish_attempt(JobId id, int64_t attempt_id, const AttemptEnd& end, double now) override;
  void set_reason(JobId id, const std::string& reason) override;
  void set_estimate(JobId id, double estimate_s) override;
  void note(JobId id, const std::string& what, double now) override;

  /// Appends the events and sets the new file offset and progress, in one transaction.
  void record_events(JobId id, int64_t attempt_id, const std::vector<std::string>& lines, int64_t new_offset,
                     const ProgressUpdate& progress) override;
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

  void write_slots(const std::vector<SlotStatus>& slots) override;
  /// Replaces the rows of these slots only (by id), leaving the others as they are.
  void update_slots(const std::vector<SlotStatus>& slots) override;
  std::vector<SlotStatus> slots();
  /// The running scheduler's heartbeat, for `status`.
  void set_scheduler_info(const SchedulerInfo& info) override;
  std::optional<SchedulerInfo> scheduler_info();

 private:
  struct InMemory {};
  Store(const std::string& run_root, InMemory);
  void use_wal();  ///< switches a state.db to WAL once, retrying while another process holds it
  void create_schema();
  void transition(JobId id, const std::string& from, const std::string& to, const std::string& reason, double now);

  std::string dir_;
  std::string runs_dir_;  ///< <dir>/runs/, which run_dir() appends to (often: once per start)
  std::unique_ptr<Db> db_;
  int64_t seen_version_ = -1;
  bool in_memory_ = false;
};

/// "./.ragmig", or $RAGMIG_STATE when set.
std::string default_state_dir();
/// <state>/scheduler.lock: held by the one scheduler running on a state folder.
std::string scheduler_lock_path(const std::string& state_dir);

}  // namespace ragmig::sched
