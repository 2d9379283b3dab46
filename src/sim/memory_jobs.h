// The simulator's job table: the rows the SQLite store keeps (sched/store.h), kept in a vector and changed
// by the same rules, without SQL, JSON or a transition log. A replay of the Philly trace spent over a third
// of its time in SQLite for rows nobody else reads. No other process reaches it, so nothing changes
// elsewhere; events, notes, slot status and the heartbeat are not kept (the simulator reads job times only).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "sched/job_table.h"

namespace ragmig::sim {

class MemoryJobs final : public sched::JobTable {
 public:
  /// run_dir() names folders under `run_root`, which is never created.
  explicit MemoryJobs(std::string run_root);

  std::string run_dir(sched::JobId id) const override;
  sched::JobId submit(const sched::JobSpec& spec, double now) override;
  sched::CancelResult request_cancel(sched::JobId id, double now) override;
  std::optional<sched::JobRecord> job(sched::JobId id) override;
  std::vector<sched::JobRecord> jobs(bool active_only) override;
  std::vector<sched::JobTimes> job_times() override;
  std::vector<sched::AttemptRecord> open_attempts() override;
  bool changed_elsewhere() override { return false; }
  std::optional<int64_t> start_attempt(sched::JobId id, const std::vector<std::string>& slots, double now) override;
  void set_attempt_pid(int64_t attempt_id, int64_t pid) override;
  bool finish_attempt(sched::JobId id, int64_t attempt_id, const sched::AttemptEnd& end, double now) override;
  void set_reason(sched::JobId id, const std::string& reason) override;
  void set_estimate(sched::JobId id, double estimate_s) override;
  void note(sched::JobId, const std::string&, double) override {}
  void record_events(sched::JobId id, int64_t attempt_id, const std::vector<std::string>& lines, int64_t new_offset,
                     const sched::ProgressUpdate& progress) override;
  void write_slots(const std::vector<sched::SlotStatus>&) override {}
  void update_slots(const std::vector<sched::SlotStatus>&) override {}
  void set_scheduler_info(const sched::SchedulerInfo&) override {}

 private:
  sched::JobRecord* find(sched::JobId id);  ///< nullptr for an unknown id

  std::string runs_dir_;
  std::vector<sched::JobRecord> jobs_;                    ///< job i + 1 at index i
  std::unordered_map<int64_t, sched::JobId> open_;        ///< open attempt -> its job
  int64_t last_attempt_ = 0;
};

}  // namespace ragmig::sim
