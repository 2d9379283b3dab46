// The scheduler loop, the same for `ragmig run` and the simulator: poll the executor, fold exits and
// events into the store, pick up submissions and cancels made by other processes, ask the policy, and
// carry out its decisions. It takes a Clock and an Executor; nothing in it knows which ones.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sched/clock.h"
#include "sched/executor.h"
#include "sched/policy.h"
#include "sched/store.h"

namespace ragmig::sched {

struct SchedulerOptions {
  std::string policy = "fifo";
  double tick_s = 0.5;          ///< longest wait between two passes when nothing happens
  double grace_s = 60;          ///< SIGTERM to SIGKILL when stopping a job
  double backoff_s = 5;         ///< first retry delay after a failure; doubles per failure
  double backoff_max_s = 600;
};

/// Seconds to wait before retry number `failures` (1-based): backoff_s * 2^(failures-1), capped.
double retry_delay(int64_t failures, double backoff_s, double backoff_max_s);

class Scheduler {
 public:
  using Log = std::function<void(const std::string&)>;
  /// Throws ConfigError for an unknown policy.
  Scheduler(Store& store, Executor& executor, Clock& clock, std::vector<Slot> slots, SchedulerOptions options,
            Log log = nullptr);

  /// Reconciles attempts left open by a previous scheduler: adopts those still running, closes the rest
  /// (their jobs requeue and resume from their checkpoints). Call once before the first step.
  void recover();
  /// One pass of the loop.
  void step();
  /// Loops until `should_stop()` or, with until_empty, until no job is queued or running. On a stop,
  /// running jobs are stopped (checkpointed) and requeued before it returns.
  void run(bool until_empty, const std::function<bool()>& should_stop);
  /// Stops every running job and waits for them (up to the grace period plus a margin).
  void shutdown();

  /// Active (queued or running) jobs as last seen.
  size_t active_jobs() const { return active_.size(); }
  const std::vector<Slot>& slots() const { return slots_; }
  const Policy& policy() const { return policy_; }

 private:
  enum class StopReason { Preempt, Cancel, Shutdown };

  void reload();
  void reload(JobId id);
  void handle_exit(const ExitStatus& status);
  void handle_events(const EventLines& lines);
  ClusterView view(double now) const;
  void start(const StartDecision& start, double now);
  void stop(JobId id, StopReason why, const std::string& reason);
  void write_slot_status(double now);
  Launch launch_for(const JobRecord& job) const;
  void say(const std::string& line) const;

  Store& store_;
  Executor& executor_;
  Clock& clock_;
  std::vector<Slot> slots_;
  std::map<std::string, int> slot_index_;
  SchedulerOptions options_;
  Policy policy_;
  Log log_;
  std::map<JobId, JobRecord> active_;
  std::map<JobId, StopReason> stopping_;
  std::map<JobId, double> utilization_;
  double last_status_write_ = -1;
};

}  // namespace ragmig::sched
