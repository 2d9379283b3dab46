// Sampling reads what the loop holds in memory (the scheduler's view and slots, the watches folded from the
// events it parsed already), and the store's count of finished jobs every few seconds, so that it costs the
// loop little even with a long queue (bench/sched/bench_monitor).
#include "monitor/monitor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "monitor/queue_eta.h"
#include "monitor/scheduler_metrics.h"

namespace ragmig::monitor {
namespace {

JobObservation job_observation(const sched::JobRecord& job, const JobWatch* watch) {
  JobObservation j;
  j.id = job.id;
  j.name = job.spec.name;
  j.state = job.state;
  j.slots = job.slots;
  j.replicas = job.spec.need.replicas;
  j.started_at = job.started_at;
  j.estimate_s = job.spec.estimate_s;
  j.attempts = job.attempts;
  j.failures = job.failures;
  if (watch) j.watch = *watch;
  return j;
}

}  // namespace

std::pair<int64_t, int64_t> host_memory_bytes() {
  // One read(2) and two look-ups: an ifstream parse of this file was most of a sample's cost.
  const int fd = ::open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {-1, -1};
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return {-1, -1};
  buf[n] = '\0';
  const auto kib = [&](const char* key) -> int64_t {
    const char* at = std::strstr(buf, key);
    return at ? std::strtoll(at + std::strlen(key), nullptr, 10) * 1024 : -1;
  };
  const int64_t total = kib("MemTotal:"), available = kib("MemAvailable:");
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
    if (job.attempts == 0) continue;  // never ran: nothing to watch yet (a long queue stays out of watches_)
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

void Monitor::on_events(sched::JobId job, const std::vector<nlohmann::json>& events, double now) {
  JobWatch& w = watches_[job];
  for (const auto& event : events) fold_event(w, event, now);
}

void Monitor::on_attempt_end(const sched::JobRecord& job, const sched::AttemptEnd& end, double now) {
  JobWatch& w = watches_[job.id];
  fold_attempt_end(w, end.outcome, end.exit_code, end.signal, now);
  attempts_ended_.inc();
  if (end.outcome == "preempted") preemptions_.inc();
  if (!sched::is_terminal(end.next)) return;
  ++stored_counts_[end.next];  // until the next count from the store
  if (thresholds_.forget_after_s <= 0) return;
  Ended& ended = ended_[job.id];
  ended.at = now;
  ended.job = job_observation(job, &w);
  ended.job.state = end.next;
  ended.job.failures += end.failure ? 1 : 0;
}

void Monitor::on_pass(double seconds) { pass_seconds_.observe(seconds); }

namespace {

// Waiting jobs: queued ones the policy may start now, minus those held for slots being made (their count and
// waits into `o`). Returns their needs, each once, which say which free slots a waiting job would fit (a sweep's
// jobs share one or two).
std::vector<const sched::Need*> observe_waiting(const sched::ClusterView& view, Observation& o) {
  std::vector<const sched::Need*> needs;
  const auto same = [](const sched::Need& a, const sched::Need& b) {
    return a.cpu == b.cpu && a.min_compute == b.min_compute && a.min_memory_mb == b.min_memory_mb &&
           a.replicas == b.replicas;
  };
  double wait_sum = 0;
  for (const auto& j : view.jobs) {
    if (j.running() || std::binary_search(view.awaiting.begin(), view.awaiting.end(), j.id)) continue;
    ++o.waiting;
    const double waited = j.waited_s(view.now);
    wait_sum += waited;
    o.oldest_wait_s = std::max(o.oldest_wait_s, waited);
    if (std::none_of(needs.begin(), needs.end(), [&](const sched::Need* n) { return same(*n, j.need); }))
      needs.push_back(&j.need);
  }
  o.mean_wait_s = o.waiting ? wait_sum / static_cast<double>(o.waiting) : 0;
  return needs;
}

}  // namespace

Observation Monitor::observe(sched::Scheduler& scheduler, double now) {
  Observation o;
  o.now = now;
  o.deadline = thresholds_.deadline;
  const sched::ClusterView& view = scheduler.cluster_view();
  const std::vector<const sched::Need*> needs = observe_waiting(view, o);
  o.slots = observe_slots(scheduler, now, needs);
  for (auto it = watches_.begin(); it != watches_.end();)  // jobs no longer active are done with
    it = scheduler.active().count(it->first) ? std::next(it) : watches_.erase(it);
  o.jobs = observe_jobs(scheduler, view, now);
  o.queue_finish_at = queue_finish_at(scheduler, view, now);
  o.work_rate = scheduler.work_rate();
  // Queued and running from the loop's own view; finished jobs as this scheduler ended them, and from the store
  // once a minute (another process changes them only by cancelling a queued job): the query was half a sample.
  if (now - counted_at_ >= 60) {
    stored_counts_ = store_.count_by_state();
    counted_at_ = now;
  }
  o.job_counts = stored_counts_;
  o.job_counts[sched::JobState::Queued] = static_cast<int64_t>(scheduler.queued_jobs());
  o.job_counts[sched::JobState::Running] = static_cast<int64_t>(scheduler.active().size() - scheduler.queued_jobs());
  // /proc/meminfo costs the kernel more than the rest of a sample; the host's memory moves slower than that.
  if (now - host_read_at_ >= 15) {
    host_memory_ = host_memory_bytes();
    host_read_at_ = now;
  }
  std::tie(o.host_memory_used_bytes, o.host_memory_total_bytes) = host_memory_;
  return o;
}

std::vector<SlotObservation> Monitor::observe_slots(const sched::Scheduler& scheduler, double now,
                                                    const std::vector<const sched::Need*>& waiting_needs) const {
  const auto& slots = scheduler.slots();
  std::vector<SlotObservation> observed;
  observed.reserve(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    SlotObservation s;
    s.slot = slots[i];
    const sched::SlotStatus status = scheduler.slot_status(i, now);
    s.job = status.job;
    s.utilization = status.utilization;
    if (probe_) s.hardware = probe_(slots[i]);
    if (!s.job && slots[i].reserved_for == 0)
      s.fits_waiting_job = std::any_of(waiting_needs.begin(), waiting_needs.end(),
                                       [&](const sched::Need* n) { return sched::fits(*n, slots[i]); });
    observed.push_back(std::move(s));
  }
  return observed;
}

std::vector<JobObservation> Monitor::observe_jobs(const sched::Scheduler& scheduler, const sched::ClusterView& view,
                                                  double now) {
  std::vector<JobObservation> jobs;
  const auto observe_job = [&](const sched::JobRecord& job) {
    const auto w = watches_.find(job.id);
    jobs.push_back(job_observation(job, w == watches_.end() ? nullptr : &w->second));
  };
  // The running jobs. The view holds them and the queued ones that may start: a queue of thousands is walked
  // as that vector, and the active jobs' map is only looked into for the few running ones.
  for (const auto& v : view.jobs) {
    if (!v.running()) continue;
    const auto job = scheduler.active().find(v.id);
    if (job != scheduler.active().end()) observe_job(job->second);
  }
  // Queued jobs that ran before: a crash loop or an out-of-memory exit waits in the queue between attempts.
  for (const auto& [id, w] : watches_) {
    if (w.failures_at.empty() && w.oom_at == 0) continue;
    const auto job = scheduler.active().find(id);
    if (job != scheduler.active().end() && job->second.state == sched::JobState::Queued) observe_job(job->second);
  }
  // Jobs that ended within forget_after_s.
  for (auto it = ended_.begin(); it != ended_.end();) {
    if (now - it->second.at > thresholds_.forget_after_s) {
      it = ended_.erase(it);
      continue;
    }
    jobs.push_back(it->second.job);
    ++it;
  }
  return jobs;
}

std::optional<double> Monitor::queue_finish_at(const sched::Scheduler& scheduler, const sched::ClusterView& view,
                                               double now) const {
  const auto& slots = scheduler.slots();
  if (slots.empty() || scheduler.active().empty()) return std::nullopt;
  // The usual length of a job (a sweep's trials share their budget), for queued jobs without an estimate.
  std::vector<double> lengths;
  for (const auto& [id, w] : watches_)
    if (w.max_steps > 0 && w.step_time_s > 0) lengths.push_back(static_cast<double>(w.max_steps) * w.step_time_s);
  std::sort(lengths.begin(), lengths.end());
  const double usual_length = lengths.empty() ? 0 : lengths[lengths.size() / 2];
  // Remaining time of running jobs, work of queued ones; unknown if any is.
  std::vector<double> running_left, queued_work;
  size_t queued_in_view = 0;
  for (const auto& v : view.jobs) {
    if (!v.running()) {
      ++queued_in_view;
      const double work = v.estimate_s > 0 ? v.estimate_s : usual_length;
      if (work <= 0) return std::nullopt;
      queued_work.push_back(work);
      continue;
    }
    if (!scheduler.active().count(v.id)) continue;
    const auto w = watches_.find(v.id);
    const auto left = w == watches_.end() ? std::nullopt : eta_seconds(w->second);
    if (!left) return std::nullopt;
    running_left.push_back(*left);
  }
  // Queued jobs out of the view (backing off after a failure, held for a slot being made) take the usual time.
  const size_t out_of_view = scheduler.queued_jobs() - std::min(queued_in_view, scheduler.queued_jobs());
  if (out_of_view > 0 && usual_length <= 0) return std::nullopt;
  queued_work.insert(queued_work.end(), out_of_view, usual_length);
  return monitor::queue_finish_at(now, running_left, queued_work, slots.size());
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
