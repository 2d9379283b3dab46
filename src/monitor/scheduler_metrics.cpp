// Series appear only where the value is known (a CPU slot has no NVML memory; a job that has not reported a
// loss has no loss series), so a dashboard never plots a placeholder.
#include "monitor/scheduler_metrics.h"

#include <fmt/format.h>

#include <cmath>

#include "monitor/alert_rules.h"

namespace ragmig::monitor {
namespace {

Labels slot_labels(const SlotObservation& s) {
  return {{"slot", s.slot.id},
          {"kind", sched::to_string(s.slot.kind)},
          {"profile", s.slot.profile},
          {"gpu", s.hardware.gpu},
          {"UUID", s.hardware.uuid},
          {"GPU_I_ID", s.hardware.gpu_instance_id},
          {"GPU_I_PROFILE", s.hardware.gpu_instance_profile}};
}

Labels job_labels(const JobObservation& j) {
  std::string slots;
  for (const auto& s : j.slots) slots += (slots.empty() ? "" : ",") + s;
  // Not "job": Prometheus gives that label to the scrape target and would rename ours to exported_job.
  return {{"job_id", std::to_string(j.id)}, {"name", j.name}, {"slot", slots}};
}

}  // namespace

void add_observation(Registry& r, const Observation& o, const std::map<std::string, AlertChange>& firing) {
  for (const auto& s : o.slots) {
    const Labels l = slot_labels(s);
    Labels info = l;
    info.emplace_back("cuda_visible_devices", s.slot.device);  // a MIG instance's own UUID ("MIG-…"), a GPU's
    r.gauge("ragmig_slot_info", "1 per slot; cuda_visible_devices is what its workers get", info).set(1);
    r.gauge("ragmig_slot_busy", "1 when a job holds the slot, else 0", l).set(s.job ? 1 : 0);
    r.gauge("ragmig_slot_compute_slices", "the slot's compute slices (a whole GPU has 7, a CPU slot 1)", l)
        .set(s.slot.compute);
    if (s.utilization >= 0)
      r.gauge("ragmig_slot_utilization_ratio",
              "share of the slot its job uses (GPU: NVML utilisation; CPU: CPU seconds per second)", l)
          .set(s.utilization);
    if (s.hardware.memory_total_bytes > 0) {
      r.gauge("ragmig_slot_memory_total_bytes", "memory of the slot (NVML)", l)
          .set(static_cast<double>(s.hardware.memory_total_bytes));
      if (s.hardware.memory_used_bytes >= 0)
        r.gauge("ragmig_slot_memory_used_bytes", "memory in use on the slot (NVML)", l)
            .set(static_cast<double>(s.hardware.memory_used_bytes));
    }
  }
  if (o.host_memory_total_bytes > 0) {
    r.gauge("ragmig_host_memory_total_bytes", "this machine's memory").set(static_cast<double>(o.host_memory_total_bytes));
    r.gauge("ragmig_host_memory_used_bytes", "this machine's memory in use (total minus available)")
        .set(static_cast<double>(o.host_memory_used_bytes));
  }
  for (auto state : {sched::JobState::Queued, sched::JobState::Running, sched::JobState::Done, sched::JobState::Failed,
                     sched::JobState::Cancelled}) {
    const auto it = o.job_counts.find(state);
    r.gauge("ragmig_jobs", "jobs by state (queued is the queue's length, backing-off jobs included)",
            {{"state", sched::to_string(state)}})
        .set(it == o.job_counts.end() ? 0 : static_cast<double>(it->second));
  }
  r.gauge("ragmig_queue_waiting_jobs", "queued jobs that may start now (not backing off after a failure)")
      .set(static_cast<double>(o.waiting));
  r.gauge("ragmig_queue_oldest_wait_seconds", "how long the longest-waiting of those has waited").set(o.oldest_wait_s);
  r.gauge("ragmig_queue_mean_wait_seconds", "their mean wait so far").set(o.mean_wait_s);
  if (o.queue_finish_at)
    r.gauge("ragmig_queue_finish_timestamp_seconds", "when every queued and running job should be done (estimate)")
        .set(*o.queue_finish_at);
  if (o.deadline > 0) r.gauge("ragmig_queue_deadline_timestamp_seconds", "[alerts] deadline").set(o.deadline);
  if (o.work_rate)
    r.gauge("ragmig_work_rate_flops_per_second",
            "training FLOP/s on a speed-1 slot, the median of the jobs' progress: what counted work is priced at")
        .set(*o.work_rate);

  for (const auto& j : o.jobs) {
    if (j.state != sched::JobState::Running) continue;
    const Labels l = job_labels(j);
    const JobWatch& w = j.watch;
    r.gauge("ragmig_job_running_seconds", "how long the job's current attempt has run", l).set(o.now - j.started_at);
    r.gauge("ragmig_job_attempts", "attempts so far, this one included", l).set(static_cast<double>(j.attempts));
    r.gauge("ragmig_job_preemptions", "attempts the scheduler stopped (preemption, migration)", l)
        .set(static_cast<double>(w.preemptions));
    if (j.estimate_s > 0)
      r.gauge("ragmig_job_estimate_seconds", "the job's work in seconds on a speed-1 slot (what sjf, ljf and srtf rank "
              "by; counted work at ragmig_work_rate_flops_per_second)", l).set(j.estimate_s);
    if (w.step >= 0) r.gauge("ragmig_job_step", "the last step the worker reported", l).set(static_cast<double>(w.step));
    if (w.max_steps > 0) r.gauge("ragmig_job_max_steps", "the run's step budget", l).set(static_cast<double>(w.max_steps));
    if (w.samples_per_s > 0)
      r.gauge("ragmig_job_samples_per_second", "training samples per second (last progress event)", l).set(w.samples_per_s);
    if (w.loss && std::isfinite(*w.loss)) r.gauge("ragmig_job_loss", "training loss (mean since the last event)", l).set(*w.loss);
    if (const auto eta = eta_seconds(w)) r.gauge("ragmig_job_eta_seconds", "seconds to the last step at the usual step time", l).set(*eta);
    if (w.last_progress_at > 0)
      r.gauge("ragmig_job_last_progress_age_seconds", "seconds since the worker last reported progress", l)
          .set(o.now - w.last_progress_at);
    if (w.checkpoint_at > 0)
      r.gauge("ragmig_job_checkpoint_age_seconds", "seconds since the newest checkpoint", l).set(o.now - w.checkpoint_at);
    if (w.rss_mb > 0) r.gauge("ragmig_job_resident_memory_bytes", "the worker's resident memory", l).set(w.rss_mb * 1048576.0);
  }
  std::map<std::string, int> per_rule;
  for (const auto& name : rule_names()) per_rule[name] = 0;
  for (const auto& [key, c] : firing) ++per_rule[c.alert.rule];
  for (const auto& [rule, n] : per_rule)
    r.gauge("ragmig_alerts_firing", "alerts firing now, by rule", {{"rule", rule}}).set(n);
  for (const auto& [key, c] : firing)
    r.gauge("ragmig_alert_firing_since_timestamp_seconds", "each alert firing now: since when its condition held",
            {{"rule", c.alert.rule}, {"job_id", c.alert.job ? std::to_string(c.alert.job) : ""}, {"slot", c.alert.slot}})
        .set(c.since);
}

}  // namespace ragmig::monitor
