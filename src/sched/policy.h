// The one policy signature: a pure function from a view of the cluster (slots, active jobs with their
// attained service, the time) to decisions. Policies are registered by name and built from spec strings
// that round-trip: "fifo", "priority(aging=2,preempt=1)", "rr(quantum=300)", "las(thresholds=3600:36000)".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sched/job.h"
#include "sched/memory_model.h"
#include "sched/slot.h"

namespace ragmig::sched {

/// A job as a policy sees it. Times are seconds on the scheduler's clock.
struct JobView {
  JobId id = 0;
  Need need;
  int64_t priority = 0;
  double submitted_at = 0;
  double estimate_s = 0;      ///< 0 = unknown
  double queued_since = 0;    ///< when it last entered the queue (queued jobs)
  std::vector<int> slots;     ///< running jobs: indices into ClusterView::slots; empty when queued
  double started_at = 0;      ///< running jobs: when the current attempt started
  bool stopping = false;      ///< running jobs: a preemption or cancel is under way
  // What grows with time is read at a time (ClusterView::now) from what it was when the job last changed state,
  // so a view of thousands of waiting jobs costs nothing to bring up to date:
  double waited_before_s = 0;   ///< time queued before queued_since (running jobs: all of it)
  double service_before_s = 0;  ///< attained service of the attempts before this one
  double work_before_s = 0;     ///< work of the attempts before this one
  double speed = 1;             ///< running jobs: the speed of the slowest slot held, which work accrues at
  /// Total time spent queued, up to `now`.
  double waited_s(double now) const { return running() ? waited_before_s : waited_before_s + since(queued_since, now); }
  /// Attained service up to `now`: seconds run x slots held (Tiresias' GPU-time).
  double service_s(double now) const {
    return running() ? service_before_s + since(started_at, now) * static_cast<double>(need.replicas)
                     : service_before_s;
  }
  /// Work done up to `now`: seconds run x slot speed (estimate_s units).
  double work_s(double now) const { return running() ? work_before_s + since(started_at, now) * speed : work_before_s; }
  // Resizable jobs (JobSpec::resizable; the others have configured_batch 0), for dynamic batch:
  int64_t configured_batch = 0;  ///< JobSpec::batch_size
  int64_t min_batch_size = 0;    ///< JobSpec::min_batch_size
  int64_t batch_size = 0;        ///< the batch it trains at now, or starts at (the last one asked for or reported)
  MemoryModel memory;            ///< memory per replica by batch: learned from its events, else the prior

  bool running() const { return !slots.empty(); }

 private:
  static double since(double t, double now) { return now > t ? now - t : 0.0; }
};

/// Everything a policy may look at. `jobs` holds every queued job that may start now and every running job.
struct ClusterView {
  double now = 0;
  std::vector<Slot> slots;
  std::vector<JobView> jobs;
  /// Queued jobs held for slots being made for them (sorted): they start nowhere until their reserved slots
  /// exist (see Slot::reserved_for).
  std::vector<JobId> awaiting;
  /// Queued jobs the MIG planner left waiting (exec::plan_rebalance: for a GPU to free, or for room), sorted:
  /// they start on no reshapable slot (Slot::reshapable) unless one is reserved for them.
  std::vector<JobId> plan_waiting;
  /// placement_order(slots) and reserved_slots(slots) where the caller keeps them (the scheduler, once per slot
  /// set); slot_order empty: placement works both out itself. Placement looks at every slot on every pass, so
  /// it reads these rather than each Slot.
  std::vector<int> slot_order;
  std::vector<int> reserved;
};

struct StartDecision {
  JobId job = 0;
  std::vector<int> slots;  ///< indices into ClusterView::slots, one per replica
};
struct PreemptDecision {
  JobId job = 0;
  std::string reason;  ///< for the log and the store, e.g. "for job 12 (priority 9 > 1)"
};
struct ResizeDecision {
  JobId job = 0;
  int64_t batch_size = 0;
};
struct Decisions {
  std::vector<StartDecision> starts;
  std::vector<PreemptDecision> preemptions;
  std::vector<ResizeDecision> resizes;
};

/// How a policy ranks and preempts. `ranked` lists the view's jobs best first: every job, or only the queued
/// ones (running jobs matter to placement only as victims). `may_preempt` says whether queued job `want` may
/// preempt running job `victim` (ranked after it); both are the view's own (in ClusterView::jobs). It is null
/// where no queued job may preempt any running one: always for a policy that does not preempt, and in a view
/// where nobody qualifies (placement then asks about no pair).
struct Ranking {
  std::vector<const JobView*> ranked;
  std::function<bool(const JobView& want, const JobView& victim)> may_preempt;
};

/// A policy name with its parameters as written ("rr(quantum=60)"), and "+dynbatch" after it for dynamic
/// batch sizing on top of its order (dynamic_batch.h): "las(min_run=60)+dynbatch".
struct PolicySpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;
  bool dynamic_batch = false;
};
inline constexpr const char* kDynamicBatchSuffix = "+dynbatch";
/// Throws ConfigError for malformed text.
PolicySpec parse_policy_spec(const std::string& text);
std::string to_string(const PolicySpec& spec);

/// A built policy: its spec and the pure decision function with its parameters bound, the ranking of every
/// job it decides by (decide(v) is place_in_order(v, rank(v)), computed faster), and the order in which it
/// would start the view's queued jobs (the MIG rebalancer shapes layouts for them in that order).
struct Policy {
  PolicySpec spec;
  std::function<Decisions(const ClusterView&)> decide;
  std::function<Ranking(const ClusterView&)> rank;
  std::function<std::vector<JobId>(const ClusterView&)> queue_order;
  /// Whether decide may preempt. A policy that does not starts nothing in a pass where no slot was freed and no
  /// job arrived or came back since the last: every queued job found no free slots to fit it then, whatever the
  /// order, and finds a subset of them now.
  bool preemptive = false;
};

struct PolicyParamInfo {
  std::string name, default_value, help;
};
struct PolicyInfo {
  std::string name, help;
  std::vector<PolicyParamInfo> params;
};

/// Every registered policy, in a stable order.
const std::vector<PolicyInfo>& policy_catalog();

/// Builds a policy from its spec string. Throws ConfigError naming an unknown policy or parameter (and
/// listing the known ones) or a bad parameter value.
Policy make_policy(const std::string& spec);

}  // namespace ragmig::sched
