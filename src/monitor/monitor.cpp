// Sampling reads what the loop holds in memory (the scheduler's active jobs and slots, the watches folded
// from events) plus one grouped count from the store, so it costs the loop little even with a long queue.
#include "monitor/monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "monitor/queue_eta.h"
#include "monitor/scheduler_metrics.h"

namespace ragmig::monitor {

std::pair<int64_t, int64_t> host_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t value = 0, total = -1, available = -1;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemTotal:") total = value * 1024;
    if (key == "MemAvailable:") available = value * 1024;
  }
  if (total <= 0 || available < 0) return {-1, -1};
  return {total - available, total};
}

Monitor::Monitor(sched::Store& store, AlertThresholds thresholds, SlotProbe probe, Log log)
    : store_(store),
      thresholds_(std::move(thresholds)),
      probe_(std::move(probe)),
      log_(std::move(log)),
      hook_(thresholds_.exec, 60, log_),
      pass_seconds_(totals_.histogram("ragmig_scheduler_pass_duration_seconds",
                                      "time of one scheduling pass (poll, events, policy, starts)",
                                      exponential_buckets(1e-5, 4, 10))),
      preemptions_(totals_.counter("ragmig_preemptions_total",
                                   "attempts the scheduler stopped to requeue (preemption, migration, shutdown)")),
      attempts_ended_(totals_.counter("ragmig_attempts_ended_total", "attempts that ended, whatever the outcome")) {
  for (const auto& rule : rule_names())
    totals_.counter("ragmig_alerts_total", "alerts fired since the scheduler started, by rule", {{"rule", rule}});
}

void Monitor::restore(const sched::Scheduler& scheduler) {
  for (const auto& [id, job] : scheduler.active()) {
    JobWatch& w = watches_[id];
    for (const auto& body : store_.events(id)) fold_event(w, nlohmann::json::parse(body, nullptr, false), 0);
    for (const auto& a : store_.attempts(id))
      if (a.ended_at > 0) fold_attempt_end(w, a.outcome, a.exit_code, a.signal, a.ended_at);
  }
  std::vector<AlertChange> log;
  for (const auto& stored : store_.alerts()) {
    try {
      log.push_back(alert_change_from_json(nlohmann::json::parse(stored.body), fmt::format("alert {}", stored.seq)));
    } catch (const std::exception&) {  // a row this version cannot read cannot be cleared either: skip it
    }
  }
  tracker_.restore(still_firing(log));
  std::lock_guard lock(mu_);
  firing_ = tracker_.firing();
}

void Monitor::on_events(const sched::EventLines& lines, double now) {
  JobWatch& w = watches_[lines.job];
  for (const auto& line : lines.lines) fold_event(w, nlohmann::json::parse(line, nullptr, false), now);
}

void Monitor::on_attempt_end(const sched::JobRecord& job, const sched::AttemptEnd& end, double now) {
  JobWatch& w = watches_[job.id];
  fold_attempt_end(w, end.outcome, end.exit_code, end.signal, now);
  attempts_ended_.inc();
  if (end.outcome == "preempted") preemptions_.inc();
  if (!sched::is_terminal(end.next) || thresholds_.forget_after_s <= 0) return;
  JobObservation& j = ended_[job.id].job;
  ended_[job.id].at = now;
  j.id = job.id;
  j.name = job.spec.name;
  j.state = end.next;
  j.slots = job.slots;
  j.replicas = job.spec.need.replicas;
  j.started_at = job.started_at;
  j.estimate_s = job.spec.estimate_s;
  j.attempts = job.attempts;
  j.failures = job.failures + (end.failure ? 1 : 0);
  j.watch = w;
}

void Monitor::on_pass(double seconds) { pass_seconds_.observe(seconds); }

Observation Monitor::observe(sched::Scheduler& scheduler, double now) {
  Observation o;
  o.now = now;
  o.deadline = thresholds_.deadline;
  const sched::ClusterView& view = scheduler.cluster_view();

  // Waiting jobs: queued ones the policy may start now, minus those held for slots being made.
  std::set<std::string> waiting_needs;
  std::vector<const sched::Need*> needs;
  double wait_sum = 0;
  for (const auto& j : view.jobs) {
    if (j.running() || std::binary_search(view.awaiting.begin(), view.awaiting.end(), j.id)) continue;
    ++o.waiting;
    wait_sum += j.waited_s;
    o.oldest_wait_s = std::max(o.oldest_wait_s, j.waited_s);
    if (waiting_needs.insert(sched::to_string(j.need)).second) needs.push_back(&j.need);
  }
  o.mean_wait_s = o.waiting ? wait_sum / static_cast<double>(o.waiting) : 0;

  const auto& slots = scheduler.slots();
  for (size_t i = 0; i < slots.size(); ++i) {
    SlotObservation s;
    s.slot = slots[i];
    const sched::SlotStatus status = scheduler.slot_status(i, now);
    s.job = status.job;
    s.utilization = status.utilization;
    if (probe_) s.hardware = probe_(slots[i]);
    if (!s.job && slots[i].reserved_for == 0)
      s.fits_waiting_job = std::any_of(needs.begin(), needs.end(), [&](const sched::Need* n) { return sched::fits(*n, slots[i]); });
    o.slots.push_back(std::move(s));
  }

  // Jobs, and what the queue's finish estimate needs: remaining time of running jobs, the usual length of a
  // job (a sweep's trials share their budget) for queued jobs without an estimate of their own.
  std::vector<double> running_left, queued_work, lengths;
  bool known = true;
  for (auto it = watches_.begin(); it != watches_.end();)  // jobs no longer active are done with
    it = scheduler.active().count(it->first) ? std::next(it) : watches_.erase(it);
  for (const auto& [id, w] : watches_)
    if (w.max_steps > 0 && w.step_time_s > 0) lengths.push_back(static_cast<double>(w.max_steps) * w.step_time_s);
  std::sort(lengths.begin(), lengths.end());
  const double usual_length = lengths.empty() ? 0 : lengths[lengths.size() / 2];
  for (const auto& [id, job] : scheduler.active()) {
    const auto w = watches_.find(id);
    const bool running = job.state == sched::JobState::Running;
    if (running) {
      const auto left = w == watches_.end() ? std::nullopt : eta_seconds(w->second);
      if (left) running_left.push_back(*left);
      else known = false;
    } else {
      const double work = job.spec.estimate_s > 0 ? job.spec.estimate_s : usual_length;
      if (work > 0) queued_work.push_back(work);
      else known = false;
    }
    const bool history = w != watches_.end() && (!w->second.failures_at.empty() || w->second.oom_at > 0);
    if (!running && !history) continue;
    JobObservation j;
    j.id = id;
    j.name = job.spec.name;
    j.state = job.state;
    j.slots = job.slots;
    j.replicas = job.spec.need.replicas;
    j.started_at = job.started_at;
    j.estimate_s = job.spec.estimate_s;
    j.attempts = job.attempts;
    j.failures = job.failures;
    if (w != watches_.end()) j.watch = w->second;
    o.jobs.push_back(std::move(j));
  }
  for (auto it = ended_.begin(); it != ended_.end();) {
    if (now - it->second.at > thresholds_.forget_after_s) {
      it = ended_.erase(it);
      continue;
    }
    o.jobs.push_back(it->second.job);
    ++it;
  }
  if (known && !slots.empty() && !scheduler.active().empty()) o.queue_finish_at = queue_finish_at(now, running_left, queued_work, slots.size());
  o.job_counts = store_.count_by_state();
  std::tie(o.host_memory_used_bytes, o.host_memory_total_bytes) = host_memory_bytes();
  return o;
}

void Monitor::after_pass(sched::Scheduler& scheduler, double now) {
  hook_.reap(now);
  if (now - last_sample_ < thresholds_.interval_s) return;
  sample(scheduler, now);
}

void Monitor::sample(sched::Scheduler& scheduler, double now) {
  last_sample_ = now;
  Observation o = observe(scheduler, now);
  const auto changes = tracker_.update(evaluate_rules(o, thresholds_), now);
  {
    std::lock_guard lock(mu_);
    latest_ = std::move(o);
    firing_ = tracker_.firing();
  }
  report(changes, now);
}

void Monitor::report(const std::vector<AlertChange>& changes, double now) {
  for (const auto& c : changes) {
    const std::string body = to_json(c).dump();
    store_.record_alert(body, c.at);
    if (c.firing)
      totals_.counter("ragmig_alerts_total", "alerts fired since the scheduler started, by rule", {{"rule", c.alert.rule}})
          .inc();
    if (log_) log_(fmt::format("alert {}: {}: {}", c.firing ? "firing" : "cleared", c.alert.rule, c.alert.message));
    try {
      hook_.run(body, now);
    } catch (const std::exception& e) {
      if (log_) log_(fmt::format("alert exec: {}", e.what()));
    }
  }
}

std::string Monitor::render() const {
  Registry gauges;
  {
    std::lock_guard lock(mu_);
    add_observation(gauges, latest_, firing_);
  }
  return gauges.render() + totals_.render();
}

std::string Monitor::firing_json() const {
  nlohmann::json out = nlohmann::json::array();
  std::lock_guard lock(mu_);
  for (const auto& [key, c] : firing_) out.push_back(to_json(c));
  return out.dump(2) + "\n";
}

Observation Monitor::latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

}  // namespace ragmig::monitor
