// Each method does what the SQL of the same name in sched/store.cpp does; tests/sim/test_scheduler_view.cpp
// drives the scheduler through both and compares every row.
#include "sim/memory_jobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"

namespace ragmig::sim {

MemoryJobs::MemoryJobs(std::string run_root)
    : runs_dir_((std::filesystem::path(std::move(run_root)) / "runs" / "").string()) {}

std::string MemoryJobs::run_dir(sched::JobId id) const { return runs_dir_ + std::to_string(id); }

sched::JobRecord* MemoryJobs::find(sched::JobId id) {
  return id >= 1 && id <= static_cast<sched::JobId>(jobs_.size()) ? &jobs_[static_cast<size_t>(id - 1)] : nullptr;
}

sched::JobId MemoryJobs::submit(const sched::JobSpec& spec, double now) {
  sched::validate(spec);
  sched::JobRecord& r = jobs_.emplace_back();
  r.id = static_cast<sched::JobId>(jobs_.size());
  r.spec = spec;
  r.submitted_at = r.queued_since = now;
  return r.id;
}

sched::CancelResult MemoryJobs::request_cancel(sched::JobId id, double now) {
  sched::JobRecord* r = find(id);
  if (!r) throw DataError(fmt::format("no job {} in the simulation", id));
  if (r->state == sched::JobState::Queued) {
    r->state = sched::JobState::Cancelled;
    r->reason = "cancelled by user";
    r->finished_at = now;
    return sched::CancelResult::Cancelled;
  }
  if (r->state == sched::JobState::Running) {
    r->cancel_requested = true;
    return sched::CancelResult::Stopping;
  }
  return sched::CancelResult::AlreadyFinished;
}

std::optional<sched::JobRecord> MemoryJobs::job(sched::JobId id) {
  const sched::JobRecord* r = find(id);
  if (!r) return std::nullopt;
  return *r;
}

std::vector<sched::JobRecord> MemoryJobs::jobs(bool active_only) {
  std::vector<sched::JobRecord> out;
  for (const auto& r : jobs_)
    if (!active_only || !sched::is_terminal(r.state)) out.push_back(r);
  return out;
}

std::vector<sched::JobTimes> MemoryJobs::job_times() {
  std::vector<sched::JobTimes> out;
  out.reserve(jobs_.size());
  for (const auto& r : jobs_)
    out.push_back({r.id, r.state, r.submitted_at, r.finished_at, r.waited_s, r.service_s, r.attempts});
  return out;
}

std::vector<sched::AttemptRecord> MemoryJobs::open_attempts() {
  std::vector<sched::AttemptRecord> out;
  for (const auto& [attempt, id] : open_) {
    const sched::JobRecord& r = *find(id);
    sched::AttemptRecord a;
    a.id = attempt;
    a.job = id;
    a.number = r.attempt_number;
    a.slots = r.slots;
    a.started_at = r.started_at;
    a.pid = r.pid;
    out.push_back(std::move(a));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

std::optional<int64_t> MemoryJobs::start_attempt(sched::JobId id, const std::vector<std::string>& slots, double now) {
  sched::JobRecord* r = find(id);
  if (!r || r->state != sched::JobState::Queued || r->cancel_requested) return std::nullopt;
  r->state = sched::JobState::Running;
  r->attempts += 1;
  r->attempt_number = r->attempts;
  r->attempt_id = ++last_attempt_;
  r->waited_s += std::max(0.0, now - r->queued_since);
  r->slots = slots;
  r->started_at = now;
  r->pid = 0;
  open_[r->attempt_id] = id;
  return r->attempt_id;
}

void MemoryJobs::set_attempt_pid(int64_t attempt_id, int64_t pid) {
  if (const auto it = open_.find(attempt_id); it != open_.end()) find(it->second)->pid = pid;
}

bool MemoryJobs::finish_attempt(sched::JobId id, int64_t attempt_id, const sched::AttemptEnd& end, double now) {
  const auto open = open_.find(attempt_id);
  if (open == open_.end()) return false;  // already closed (a second report of the same exit)
  open_.erase(open);
  sched::JobRecord* r = find(id);
  if (!r) return true;  // the store, too, closes an attempt whatever its job
  r->state = end.next;
  r->reason = end.reason;
  r->not_before = end.not_before;
  r->queued_since = now;
  r->service_s += end.service_s;
  r->work_s += end.work_s;
  r->failures += end.failure ? 1 : 0;
  r->finished_at = sched::is_terminal(end.next) ? now : 0.0;
  if (end.next != sched::JobState::Queued) r->cancel_requested = false;
  // What the store's join with the open attempt gives once it is closed.
  r->attempt_id = r->attempt_number = r->pid = 0;
  r->slots.clear();
  r->started_at = 0;
  return true;
}

void MemoryJobs::set_reason(sched::JobId id, const std::string& reason) {
  if (sched::JobRecord* r = find(id); r && r->state == sched::JobState::Queued) r->reason = reason;
}

void MemoryJobs::set_estimate(sched::JobId id, double estimate_s) {
  sched::JobRecord* r = find(id);
  if (r && (r->state == sched::JobState::Queued || r->state == sched::JobState::Running))
    r->spec.estimate_s = estimate_s;
}

void MemoryJobs::record_events(sched::JobId id, int64_t, const std::vector<std::string>&, int64_t new_offset,
                               const sched::ProgressUpdate& progress) {
  sched::JobRecord* r = find(id);
  if (!r) return;
  r->events_offset = new_offset;
  if (progress.step) r->step = *progress.step;
  if (progress.checkpoint_step) r->checkpoint_step = *progress.checkpoint_step;
  if (progress.samples_per_s) r->samples_per_s = *progress.samples_per_s;
}

}  // namespace ragmig::sim
