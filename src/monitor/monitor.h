// The scheduler's monitor: it listens to the loop (the workers' events, attempt ends, pass times), samples
// the slots, jobs and queue after passes, raises and clears alerts (recorded in the store, logged, handed to
// [alerts] exec) and keeps the latest sample for /metrics, which a server thread renders at any time.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "monitor/alert_hook.h"
#include "monitor/alert_rules.h"
#include "monitor/alert_tracker.h"
#include "monitor/metrics.h"
#include "monitor/observation.h"
#include "sched/scheduler.h"
#include "sched/store.h"

namespace ragmig::monitor {

/// What NVML (or nothing, on CPU slots) says of a slot: DCGM join labels and memory. Called once per slot
/// per sample on the loop thread.
using SlotProbe = std::function<SlotHardware(const sched::Slot&)>;

/// This machine's memory from /proc/meminfo (used = MemTotal - MemAvailable); {-1, -1} when unreadable.
std::pair<int64_t, int64_t> host_memory_bytes();

class Monitor : public sched::SchedulerListener {
 public:
  using Log = std::function<void(const std::string&)>;
  Monitor(sched::Store& store, AlertThresholds thresholds, SlotProbe probe = {}, Log log = nullptr);

  /// Rebuilds what a previous scheduler left: the active jobs' watches from the store's events and attempts,
  /// and the alerts still firing. Call after Scheduler::recover().
  void restore(const sched::Scheduler& scheduler);
  /// After a pass: samples (at most every thresholds.interval_s), evaluates the rules, reports changes.
  void after_pass(sched::Scheduler& scheduler, double now);
  /// Samples now, whatever the interval.
  void sample(sched::Scheduler& scheduler, double now);

  void on_events(sched::JobId job, const std::vector<nlohmann::json>& events, double now) override;
  void on_attempt_end(const sched::JobRecord& job, const sched::AttemptEnd& end, double now) override;
  void on_pass(double seconds) override;

  /// /metrics: the latest sample and the totals, in Prometheus' text format. Thread-safe.
  std::string render() const;
  /// The alerts firing now, as a JSON array. Thread-safe.
  std::string firing_json() const;
  /// The latest sample (tests, benchmarks).
  Observation latest() const;

 private:
  Observation observe(sched::Scheduler& scheduler, double now);
  std::vector<SlotObservation> observe_slots(const sched::Scheduler& scheduler, double now,
                                             const std::vector<const sched::Need*>& waiting_needs) const;
  /// Running jobs, queued ones that ran before, and those ended within forget_after_s (which it forgets after).
  std::vector<JobObservation> observe_jobs(const sched::Scheduler& scheduler, const sched::ClusterView& view,
                                          double now);
  /// When every queued and running job should be done; nullopt while any of them has no estimate.
  std::optional<double> queue_finish_at(const sched::Scheduler& scheduler, const sched::ClusterView& view,
                                        double now) const;
  void report(const std::vector<AlertChange>& changes, double now);

  sched::Store& store_;
  AlertThresholds thresholds_;
  SlotProbe probe_;
  Log log_;
  AlertHook hook_;
  AlertTracker tracker_;
  std::unordered_map<sched::JobId, JobWatch> watches_;
  struct Ended {
    JobObservation job;
    double at = 0;
  };
  std::map<sched::JobId, Ended> ended_;  ///< jobs that ended, kept for forget_after_s
  double last_sample_ = -1e300;
  std::map<sched::JobState, int64_t> stored_counts_;  ///< jobs per state as the store last said
  double counted_at_ = -1e300;
  std::pair<int64_t, int64_t> host_memory_{-1, -1};  ///< as last read, every 15 s
  double host_read_at_ = -1e300;

  Registry totals_;  ///< counters and histograms that accumulate over the scheduler's life
  Histogram& pass_seconds_;
  Counter& preemptions_;
  Counter& attempts_ended_;

  mutable std::mutex mu_;  ///< guards the two below, read by render()
  Observation latest_;
  std::map<std::string, AlertChange> firing_;
};

}  // namespace ragmig::monitor
