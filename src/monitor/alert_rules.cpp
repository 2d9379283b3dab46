// Each rule says what it saw and what it expected in its message, so an alert read at a terminal or in a
// chat needs no lookup.
#include "monitor/alert_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ragmig::monitor {
namespace {

std::string age(double s) {
  if (s < 10) return fmt::format("{:.1f} s", s);
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

std::string who(const JobObservation& j) { return fmt::format("job {} ({})", j.id, j.name); }

std::string slot_of(const JobObservation& j) { return j.slots.empty() ? "" : j.slots.front(); }

void job_rules(const Observation& o, const JobObservation& j, const AlertThresholds& t, std::vector<Alert>& out) {
  const JobWatch& w = j.watch;
  const bool running = j.state == sched::JobState::Running;
  // Progress since the event: a worker that reported progress after a failure or OOM has recovered.
  const auto progressed_since = [&](double at) { return w.last_progress_at > at && w.progress_events > 0; };

  if (running && w.finished_at == 0) {
    if (w.progress_events >= 2 && w.progress_interval_s > 0) {
      double limit = std::max(t.stall_min_s, t.stall_factor * w.progress_interval_s);
      // After the last step the worker evaluates and writes its model, which reports no progress.
      if (w.max_steps > 0 && w.step >= w.max_steps) limit = std::max(limit, t.start_timeout_s);
      const double silent = o.now - w.last_progress_at;
      if (silent > limit)
        out.push_back({"stall", j.id, slot_of(j), silent, limit,
                       fmt::format("{} made no progress for {} (usually every {}; step {})", who(j), age(silent),
                                   age(w.progress_interval_s), w.step)});
    } else {
      // No usual interval yet: measured from the attempt's start (the scheduler's, if the worker said nothing).
      const double since = std::max(j.started_at, w.last_progress_at);
      const double silent = o.now - since;
      if (since > 0 && silent > t.start_timeout_s)
        out.push_back({"stall", j.id, slot_of(j), silent, t.start_timeout_s,
                       fmt::format("{} has not reported progress {} after {}", who(j), age(silent),
                                   w.progress_events ? "its first step" : "starting")});
    }
  }
  if (w.loss_not_finite)
    out.push_back({"loss_not_finite", j.id, slot_of(j), std::nan(""), 0,
                   fmt::format("{}: the training loss became {} at step {}", who(j), w.loss_text, w.step)});
  else if (running && w.loss && w.progress_events >= t.loss_exploding_min_events && std::isfinite(w.lowest_loss) &&
           w.lowest_loss > 0 && *w.loss > t.loss_exploding_factor * w.lowest_loss &&
           *w.loss - w.lowest_loss >= t.loss_exploding_min_rise)
    out.push_back({"loss_exploding", j.id, slot_of(j), *w.loss / w.lowest_loss, t.loss_exploding_factor,
                   fmt::format("{}: loss {:.4g} at step {} is {:.1f}x its lowest ({:.4g})", who(j), *w.loss, w.step,
                               *w.loss / w.lowest_loss, w.lowest_loss)});
  if (w.oom_at > 0 && o.now - w.oom_at <= t.oom_window_s && !progressed_since(w.oom_at))
    out.push_back({"oom", j.id, slot_of(j), o.now - w.oom_at, t.oom_window_s,
                   fmt::format("{} ran out of memory {} ago: {}", who(j), age(o.now - w.oom_at), w.oom_detail)});
  if (!w.failures_at.empty()) {
    const auto recent = std::count_if(w.failures_at.begin(), w.failures_at.end(),
                                      [&](double at) { return o.now - at <= t.crash_loop_window_s; });
    if (recent >= t.crash_loop_failures && !progressed_since(w.failures_at.back()))
      out.push_back({"crash_loop", j.id, "", static_cast<double>(recent), static_cast<double>(t.crash_loop_failures),
                     fmt::format("{} failed {} times in the last {} ({} attempts in all)", who(j), recent,
                                 age(t.crash_loop_window_s), j.attempts)});
  }
}

void slot_rules(const Observation& o, const SlotObservation& s, const AlertThresholds& t, std::vector<Alert>& out) {
  if (o.waiting > 0) {
    // Held but barely used, or free while a waiting job would fit: either way the queue waits on nothing.
    const bool held_idle = s.job != 0 && s.utilization >= 0 && s.utilization < t.idle_utilization;
    const bool free_idle = s.job == 0 && s.fits_waiting_job;
    if (held_idle || free_idle) {
      Alert a{"slot_idle", s.job, s.slot.id, held_idle ? s.utilization : 0.0, t.idle_utilization,
              held_idle ? fmt::format("slot {} is {:.0f}% used by job {} while {} job(s) wait", s.slot.id,
                                      100 * s.utilization, s.job, o.waiting)
                        : fmt::format("slot {} is free while {} job(s) wait that would fit it", s.slot.id, o.waiting),
              t.idle_s};
      out.push_back(std::move(a));
    }
  }
  const auto& h = s.hardware;
  if (h.memory_total_bytes > 0 && h.memory_used_bytes >= 0) {
    const double used = static_cast<double>(h.memory_used_bytes) / static_cast<double>(h.memory_total_bytes);
    if (used >= t.memory_fraction)
      out.push_back({"memory_high", s.job, s.slot.id, used, t.memory_fraction,
                     fmt::format("slot {}: {:.0f}% of its {:.1f} GiB memory in use{}", s.slot.id, 100 * used,
                                 static_cast<double>(h.memory_total_bytes) / (1 << 30),
                                 s.job ? fmt::format(" (job {})", s.job) : ""),
                     t.memory_for_s});
  }
}

}  // namespace

const std::vector<std::string>& rule_names() {
  static const std::vector<std::string> names = {"stall", "loss_not_finite", "loss_exploding", "slot_idle",
                                                 "memory_high", "oom", "crash_loop", "deadline"};
  return names;
}

std::vector<Alert> evaluate_rules(const Observation& o, const AlertThresholds& t) {
  std::vector<Alert> out;
  for (const auto& j : o.jobs) job_rules(o, j, t, out);
  for (const auto& s : o.slots) slot_rules(o, s, t, out);
  if (o.host_memory_total_bytes > 0 && o.host_memory_used_bytes >= 0) {
    const double used = static_cast<double>(o.host_memory_used_bytes) / static_cast<double>(o.host_memory_total_bytes);
    if (used >= t.memory_fraction)
      out.push_back({"memory_high", 0, "host", used, t.memory_fraction,
                     fmt::format("this machine has {:.0f}% of its {:.1f} GiB memory in use", 100 * used,
                                 static_cast<double>(o.host_memory_total_bytes) / (1 << 30)),
                     t.memory_for_s});
  }
  if (t.deadline > 0 && o.queue_finish_at && *o.queue_finish_at > t.deadline)
    out.push_back({"deadline", 0, "", *o.queue_finish_at, t.deadline,
                   fmt::format("the queue should finish in {} ({} after the deadline)", age(*o.queue_finish_at - o.now),
                               age(*o.queue_finish_at - t.deadline))});
  return out;
}

}  // namespace ragmig::monitor
