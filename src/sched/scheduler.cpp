// The loop's bookkeeping. The store is the truth; `active_` mirrors its queued and running jobs: updated in
// place with what this scheduler's own transitions just committed, and re-read whenever another process
// commits (a submit or a cancel) or a conditional transition loses.
#include "sched/scheduler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/error.h"
#include "sched/dynamic_batch.h"
#include "sched/job_event.h"
#include "sched/placement.h"

namespace ragmig::sched {
namespace {

// The last lines the worker wrote in its latest attempt (after the executor's "==> attempt" header), so
// `status` shows why a job failed without opening files.
std::string log_tail(const std::string& run_dir, size_t max_lines) {
  std::string text;
  try {
    text = read_file(std::filesystem::path(run_dir) / "worker.log");
  } catch (const IoError&) {
    return "";
  }
  const size_t header = text.rfind("==> attempt");
  if (header != std::string::npos) {
    const size_t body = text.find('\n', header);
    text = body == std::string::npos ? "" : text.substr(body + 1);
  }
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (lines.size() > max_lines) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(max_lines));
  std::string tail;
  for (const auto& l : lines) tail += (tail.empty() ? "" : " | ") + l.substr(0, 200);
  return tail;
}

}  // namespace

Scheduler::Scheduler(JobTable& store, Executor& executor, Clock& clock, std::vector<Slot> slots,
                     SchedulerOptions options, Log log)
    : store_(store),
      executor_(executor),
      clock_(clock),
      slots_(std::move(slots)),
      options_(std::move(options)),
      policy_(make_policy(options_.policy)),
      log_(std::move(log)) {
  for (size_t i = 0; i < slots_.size(); ++i) {
    RAGMIG_CHECK(!slot_index_.count(slots_[i].id), "two slots named " + slots_[i].id);
    slot_index_[slots_[i].id] = static_cast<int>(i);
  }
  view_.slots = slots_;
  view_.slot_order = placement_order(slots_);
  view_.reserved = reserved_slots(slots_);
  slot_owner_.assign(slots_.size(), 0);
}

void Scheduler::set_slots(std::vector<Slot> slots, std::vector<JobId> awaiting, std::vector<JobId> plan_waiting) {
  std::unordered_map<std::string, int> index;
  for (size_t i = 0; i < slots.size(); ++i) {
    RAGMIG_CHECK(!index.count(slots[i].id), "two slots named " + slots[i].id);
    index[slots[i].id] = static_cast<int>(i);
  }
  for (const auto& [id, job] : active_)
    if (job.state == JobState::Running)
      for (const auto& s : job.slots)
        RAGMIG_CHECK(!slot_index_.count(s) || index.count(s), fmt::format("slot {} of running job {} was removed", s, id));
  slots_ = std::move(slots);
  slot_index_ = std::move(index);
  view_.slots = slots_;
  view_.slot_order = placement_order(slots_);
  view_.reserved = reserved_slots(slots_);
  std::sort(awaiting.begin(), awaiting.end());
  view_.awaiting = std::move(awaiting);
  std::sort(plan_waiting.begin(), plan_waiting.end());
  view_.plan_waiting = std::move(plan_waiting);
  slots_changed_ = true;
  slots_offered_ = true;
  view_stale_ = true;
  runnable_all_ = true;
  reason_of_need_.clear();
  held_.clear();
  slot_owner_.assign(slots_.size(), 0);
  for (const auto& [id, job] : active_) index_slots(job);
}

JobId Scheduler::submit(const JobSpec& spec) {
  const double now = clock_.now();
  const JobId id = store_.submit(spec, now);
  // The row as JobTable::submit wrote it, without reading it back.
  JobRecord& job = active_[id];
  job.id = id;
  job.spec = spec;
  job.state = JobState::Queued;
  job.submitted_at = job.queued_since = now;
  ++queued_;
  prices_stale_ = prices_stale_ || spec.work.flops > 0;
  view_dirty_.push_back(id);
  runnable_dirty_.push_back(id);
  return id;
}

void Scheduler::index_slots(const JobRecord& job) {
  if (job.state != JobState::Running) {
    release(job.id);
    return;
  }
  std::vector<int> held;
  for (const auto& slot_id : job.slots)
    if (const auto it = slot_index_.find(slot_id); it != slot_index_.end()) held.push_back(it->second);
  hold(job.id, std::move(held));
}

void Scheduler::hold(JobId id, std::vector<int> slots) {
  release(id);
  for (int s : slots) {
    slot_owner_[static_cast<size_t>(s)] = id;
    status_dirty_.push_back(s);
  }
  held_[id] = std::move(slots);
}

void Scheduler::release(JobId id) {
  const auto it = held_.find(id);
  if (it == held_.end()) return;
  for (int s : it->second) {
    if (slot_owner_[static_cast<size_t>(s)] == id) slot_owner_[static_cast<size_t>(s)] = 0;
    status_dirty_.push_back(s);
  }
  held_.erase(it);
}

void Scheduler::cancel(JobId id, const std::string& reason) {
  if (store_.request_cancel(id, clock_.now()) == CancelResult::AlreadyFinished) return;
  reload(id);  // a queued job is cancelled already and leaves active_; a running one is marked
  if (const auto it = active_.find(id); it != active_.end() && it->second.state == JobState::Running) {
    cancel_reasons_[id] = reason;
    stop(id, StopReason::Cancel, reason);
  }
}

void Scheduler::set_estimate(JobId id, double estimate_s) {
  store_.set_estimate(id, estimate_s);
  if (const auto it = active_.find(id); it != active_.end()) {
    it->second.spec.estimate_s = estimate_s;
    view_dirty_.push_back(id);
  }
}

void Scheduler::migrate(JobId id, const std::string& reason) {
  const auto it = active_.find(id);
  if (it == active_.end() || it->second.state != JobState::Running) return;
  stop(id, StopReason::Preempt, "moved: " + reason);
}

bool Scheduler::made_progress(const JobRecord& job) const {
  const auto at_start = start_checkpoint_.find(job.id);
  return at_start == start_checkpoint_.end() || job.checkpoint_step > at_start->second;  // adopted: unknown, trust it
}

void Scheduler::say(const std::string& line) const {
  if (log_) log_(line);
}

void Scheduler::reload() {
  view_stale_ = true;
  runnable_all_ = true;
  check_cancels_ = true;
  status_stale_ = true;
  active_.clear();
  held_.clear();
  slot_owner_.assign(slots_.size(), 0);
  queued_ = 0;
  for (auto& job : store_.jobs(/*active_only=*/true)) {
    queued_ += job.state == JobState::Queued;
    prices_stale_ = prices_stale_ || job.spec.work.flops > 0;
    index_slots(job);
    active_[job.id] = std::move(job);
  }
  for (auto it = stopping_.begin(); it != stopping_.end();) {
    it = active_.count(it->first) ? std::next(it) : stopping_.erase(it);
  }
}

void Scheduler::reload(JobId id) {
  view_dirty_.push_back(id);
  runnable_dirty_.push_back(id);
  check_cancels_ = true;
  if (const auto it = active_.find(id); it != active_.end() && it->second.state == JobState::Queued) --queued_;
  auto job = store_.job(id);
  if (job && !is_terminal(job->state)) {
    queued_ += job->state == JobState::Queued;
    prices_stale_ = prices_stale_ || job->spec.work.flops > 0;
    index_slots(*job);
    active_[id] = std::move(*job);
  } else {
    if (const auto gone = active_.find(id); gone != active_.end()) forget_work(gone->second);
    active_.erase(id);
    release(id);
    stopping_.erase(id);
    utilization_.erase(id);
  }
}

Launch Scheduler::launch_for(const JobRecord& job) const {
  Launch launch;
  launch.job = job.id;
  launch.attempt_id = job.attempt_id;
  launch.attempt_number = job.attempt_number;
  launch.spec = job.spec;
  for (const auto& id : job.slots) {
    const auto it = slot_index_.find(id);
    if (it != slot_index_.end()) launch.slots.push_back(slots_[static_cast<size_t>(it->second)]);
  }
  launch.run_dir = store_.run_dir(job.id);
  launch.events_offset = job.events_offset;
  return launch;
}

void Scheduler::recover() {
  recovered_ = true;
  reload();
  const double now = clock_.now();
  for (const auto& attempt : store_.open_attempts()) {
    auto job = store_.job(attempt.job);
    if (!job) continue;
    const auto ended = executor_.reattach(launch_for(*job), attempt.pid);
    if (ended) {
      store_.note(job->id, fmt::format("attempt {} ended while no scheduler watched", attempt.number), now);
      ExitStatus status = *ended;
      status.job = job->id;
      status.attempt_id = attempt.id;
      handle_exit(status);
    } else {
      say(fmt::format("job {} ({}): adopted attempt {} still running (pid {})", job->id, job->spec.name,
                      attempt.number, attempt.pid));
      store_.note(job->id, fmt::format("attempt {} adopted by a new scheduler", attempt.number), now);
    }
  }
  reload();
}

void Scheduler::handle_events(const EventLines& lines) {
  ProgressUpdate progress;
  std::vector<nlohmann::json> parsed;  // for the listener
  // A job that stated its work measures the rate it is priced at (work_pricer.h), at the speed of the slots it
  // holds now, having attained `attained` (JobView::work_s) as these events come.
  const auto job = active_.find(lines.job);
  const JobSpec::Work* work = nullptr;
  double speed = 0, attained = 0;
  if (job != active_.end() && job->second.spec.work.flops > 0)
    if (const auto slowest = slowest_slot_speed(job->second)) {
      work = &job->second.spec.work;
      speed = *slowest;
      if (job->second.state == JobState::Running)
        attained = job->second.work_s + std::max(0.0, clock_.now() - job->second.started_at) * speed;
    }
  for (const auto& line : lines.lines) {
    auto event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object()) continue;  // the store keeps the line; progress only reads what parses
    const JobEvent e = read_job_event(event);
    const std::string& kind = e.kind;
    if (e.step) {
      if (kind == "checkpoint") progress.checkpoint_step = *e.step;
      if (kind == "progress" || kind == "start" || kind == "done" || kind == "preempted") progress.step = *e.step;
    }
    if (kind == "progress" && e.samples_per_s) progress.samples_per_s = *e.samples_per_s;
    if ((kind == "start" || kind == "progress" || kind == "resize") && e.batch_size)
      batch_size_[lines.job] = *e.batch_size;
    // A GPU worker's peak memory and the part of it that does not grow with the batch: the memory model that
    // dynamic batch sizes jobs by (memory_model.h).
    if (e.memory_mb && e.state_memory_mb)
      if (const auto b = batch_size_.find(lines.job); b != batch_size_.end())
        if (const MemoryModel m = learned_memory(*e.memory_mb, *e.state_memory_mb, b->second); m.learned) {
          memory_[lines.job] = m;
          view_dirty_.push_back(lines.job);
        }
    if (kind == "oom") oom_attempt_[lines.job] = lines.attempt_id;
    if (work) {
      pricer_.on_event(lines.job, *work, event, speed, attained);
      prices_stale_ = true;  // the rate may have moved, the job's steps have
    }
    if (listener_) parsed.push_back(std::move(event));
  }
  store_.record_events(lines.job, lines.attempt_id, lines.lines, lines.offset, progress);
  if (listener_ && !parsed.empty()) listener_->on_events(lines.job, parsed, clock_.now());
  if (job != active_.end()) {
    job->second.events_offset = lines.offset;
    if (progress.step) job->second.step = *progress.step;
    if (progress.checkpoint_step) job->second.checkpoint_step = *progress.checkpoint_step;
  }
}

void Scheduler::forget_work(const JobRecord& job) {
  if (!(job.spec.work.flops > 0)) return;
  pricer_.forget(job.id);
  prices_stale_ = true;  // the median job, which prices all until a rate is measured, may be another
}

void Scheduler::price_work() {
  if (!prices_stale_) return;
  prices_stale_ = false;
  std::vector<double> flops;
  for (const auto& [id, job] : active_)
    if (job.spec.work.flops > 0) flops.push_back(job.spec.work.flops);
  const double unmeasured = unmeasured_rate(std::move(flops));
  int priced = 0;
  for (const auto& [id, job] : active_)
    if (job.spec.work.flops > 0)
      if (const auto estimate = pricer_.new_estimate(id, job.spec.work, job.spec.estimate_s, unmeasured)) {
        set_estimate(id, *estimate);
        ++priced;
      }
  // Logged the first time, when the prices start (or stop) coming from measurements, and when the median rate
  // moved by more than a quarter since the last line: each job's own rate settles over its first progress windows
  // and every move of 10 % reprices it (`ragmig status` shows the estimates as they are).
  const double rate = pricer_.rate().value_or(0);
  const bool news = said_rate_ < 0 || (rate > 0) != (said_rate_ > 0) ||
                    (rate > 0 && std::abs(rate / said_rate_ - 1) > 0.25);
  if (priced > 0 && news) {
    said_rate_ = rate;
    say(rate > 0 ? fmt::format("{} estimate(s) priced at the measured rates (median {:.3g} FLOP/s)", priced, rate)
                 : fmt::format("{} estimate(s) priced at {:.3g} FLOP/s (the median job an hour until measured)",
                               priced, unmeasured));
  }
}

void Scheduler::request_batch_size(JobId id, int64_t batch_size, const std::string& why, double now) {
  executor_.request_batch_size(id, store_.run_dir(id), batch_size);
  requested_batch_[id] = batch_size;
  view_dirty_.push_back(id);
  store_.note(id, fmt::format("batch size -> {} ({})", batch_size, why), now);
}

AttemptFacts Scheduler::attempt_facts(const JobRecord& job, const ExitStatus& status, double now) const {
  AttemptFacts f;
  const auto stop = stopping_.find(job.id);
  f.cancelled = job.cancel_requested || (stop != stopping_.end() && stop->second == StopReason::Cancel);
  if (const auto why = cancel_reasons_.find(job.id); why != cancel_reasons_.end()) f.cancel_reason = why->second;
  f.made_progress = made_progress(job);
  f.checkpoint_step = job.checkpoint_step;
  f.failures = job.failures;
  f.max_retries = job.spec.max_retries;
  f.attempt_number = job.attempt_number;
  const auto oom = oom_attempt_.find(job.id);
  const auto batch = batch_size_.find(job.id);
  if (oom != oom_attempt_.end() && oom->second == status.attempt_id && batch != batch_size_.end())
    f.oom_batch = batch->second;
  f.resizable = job.spec.resizable();
  f.min_batch_size = job.spec.min_batch_size;
  f.batch_size = job.spec.batch_size;
  f.need = job.spec.need.what;
  if (f.oom_batch > 0 && f.resizable) f.unrunnable = unrunnable_reason(job.spec.need, slots_);
  f.now = now;
  f.backoff_s = options_.backoff_s;
  f.backoff_max_s = options_.backoff_max_s;
  return f;
}

void Scheduler::handle_exit(const ExitStatus& status) {
  const double now = clock_.now();
  auto it = active_.find(status.job);
  if (it == active_.end() || it->second.attempt_id != status.attempt_id) {
    reload(status.job);
    it = active_.find(status.job);
    if (it == active_.end() || it->second.attempt_id != status.attempt_id) return;  // already closed
  }
  const JobRecord& job = it->second;

  const AttemptFacts facts = attempt_facts(job, status, now);
  AttemptEnd end;
  if (const auto e = end_without_failure(status, facts)) {
    end = *e;
  } else {
    const FailedAttempt failed = failed_attempt(status, facts, log_tail(store_.run_dir(job.id), 3));
    end = failed.end;
    // What running out of memory there proved, learned by a resizable job's memory model, so that dynamic batch
    // does not try more there again.
    if (facts.oom_batch > 0 && facts.resizable)
      if (const auto held = held_.find(job.id); held != held_.end() && !held->second.empty()) {
        const int64_t retry = oom_retry_batch(facts);
        memory_[job.id] = after_out_of_memory(memory_of(job), least_memory_mb(slots_, held->second),
                                              retry > 0 ? retry : facts.oom_batch - 1);
      }
    if (failed.retry_batch > 0)
      request_batch_size(job.id, failed.retry_batch, "out of memory at " + std::to_string(facts.oom_batch), now);
  }
  const double ran = std::max(0.0, now - job.started_at);
  end.service_s = ran * static_cast<double>(job.spec.need.replicas);
  end.work_s = ran * slowest_slot_speed(job).value_or(1.0);
  const bool closed = store_.finish_attempt(job.id, status.attempt_id, end, now);
  if (closed && listener_) listener_->on_attempt_end(job, end, now);
  view_dirty_.push_back(status.job);
  // A job stopped with a reason had it said at "stopping:" (Scheduler::stop); the end says how it exited.
  if (end.outcome == "cancelled" && cancel_reasons_.count(job.id))
    say(fmt::format("job {} ({}): running -> {} ({})", job.id, job.spec.name, to_string(end.next), describe(status)));
  else
    say(fmt::format("job {} ({}): running -> {}: {}", job.id, job.spec.name, to_string(end.next), end.reason));
  stopping_.erase(status.job);
  cancel_reasons_.erase(status.job);
  start_checkpoint_.erase(status.job);
  oom_attempt_.erase(status.job);
  utilization_.erase(status.job);
  if (!closed) {
    reload(status.job);
    return;
  }
  if (is_terminal(end.next)) {  // done with it: the store has the rest
    batch_size_.erase(status.job);
    requested_batch_.erase(status.job);
    memory_.erase(status.job);
    forget_work(it->second);
    active_.erase(it);
    release(status.job);
    return;
  }
  // Requeued: the row as JobTable::finish_attempt wrote it, without reading it back.
  JobRecord& queued = it->second;
  release(status.job);
  ++queued_;
  queued.state = JobState::Queued;
  queued.reason = end.reason;
  queued.not_before = end.not_before;
  queued.queued_since = now;
  queued.service_s += end.service_s;
  queued.work_s += end.work_s;
  queued.failures += end.failure ? 1 : 0;
  queued.finished_at = 0;
  queued.attempt_id = queued.attempt_number = queued.pid = 0;
  queued.started_at = 0;
  queued.slots.clear();
}

std::optional<double> Scheduler::slowest_slot_speed(const JobRecord& job) const {
  std::optional<double> speed;
  for (const auto& id : job.slots)
    if (const auto s = slot_index_.find(id); s != slot_index_.end())
      speed = std::min(speed.value_or(1e300), slots_[static_cast<size_t>(s->second)].speed);
  return speed;
}

MemoryModel Scheduler::memory_of(const JobRecord& job) const {
  const auto it = memory_.find(job.id);
  return it != memory_.end() ? it->second : prior_memory(job.spec.need, job.spec.batch_size);
}

bool Scheduler::view_entry(const JobRecord& job, JobView& j) const {
  j.id = job.id;
  j.need = job.spec.need;
  j.priority = job.spec.priority;
  j.submitted_at = job.submitted_at;
  j.estimate_s = job.spec.estimate_s;
  j.waited_before_s = job.waited_s;
  j.service_before_s = job.service_s;
  j.work_before_s = job.work_s;
  j.slots.clear();
  if (job.spec.resizable()) {
    j.configured_batch = job.spec.batch_size;
    j.min_batch_size = job.spec.min_batch_size;
    const auto requested = requested_batch_.find(job.id);
    const auto reported = batch_size_.find(job.id);
    j.batch_size = requested != requested_batch_.end() ? requested->second
                   : reported != batch_size_.end()      ? reported->second
                                                        : job.spec.batch_size;
    j.memory = memory_of(job);
  }
  if (job.state == JobState::Queued) {
    j.queued_since = job.queued_since;
    j.started_at = 0;
    j.stopping = false;
    j.speed = 1;
    return true;
  }
  j.queued_since = 0;
  j.started_at = job.started_at;
  j.stopping = stopping_.count(job.id) > 0;
  // Slots this scheduler does not have are left out of held_: the job still runs there.
  if (const auto held = held_.find(job.id); held != held_.end()) j.slots = held->second;
  j.speed = slowest_slot_speed(job).value_or(1.0);  // what its attempt's work is counted at when it ends
  return !j.slots.empty();
}

void Scheduler::refresh_view(double now) {
  // Kept up to date from the jobs that changed since the last pass (view_dirty_) rather than rebuilt, so a
  // pass costs what changed (what grows with time is read at view_.now: JobView). In id order, as active_.
  auto included = [&](const JobRecord& job) {
    return job.state != JobState::Queued || (job.not_before <= now && !job.cancel_requested);
  };
  if (view_stale_) {
    view_.jobs.clear();
    held_back_.clear();
    for (const auto& [id, job] : active_) {
      if (!included(job)) {
        held_back_.push_back(id);
        continue;
      }
      view_.jobs.emplace_back();
      if (!view_entry(job, view_.jobs.back())) view_.jobs.pop_back();
    }
    view_stale_ = false;
    view_dirty_.clear();
  } else {
    view_dirty_.insert(view_dirty_.end(), held_back_.begin(), held_back_.end());  // back-offs may be over
    held_back_.clear();
    std::sort(view_dirty_.begin(), view_dirty_.end());
    view_dirty_.erase(std::unique(view_dirty_.begin(), view_dirty_.end()), view_dirty_.end());
    for (JobId id : view_dirty_) {
      const auto pos = static_cast<size_t>(
          std::lower_bound(view_.jobs.begin(), view_.jobs.end(), id, [](const JobView& j, JobId x) { return j.id < x; }) -
          view_.jobs.begin());
      const bool present = pos < view_.jobs.size() && view_.jobs[pos].id == id;
      const auto it = active_.find(id);
      bool keep = false;
      if (it != active_.end()) {
        if (!included(it->second)) {
          held_back_.push_back(id);
        } else {
          JobView entry;
          keep = view_entry(it->second, entry);
          if (keep && present)
            view_.jobs[pos] = std::move(entry);
          else if (keep)
            view_.jobs.insert(view_.jobs.begin() + static_cast<std::ptrdiff_t>(pos), std::move(entry));
        }
      }
      if (!keep && present) view_.jobs.erase(view_.jobs.begin() + static_cast<std::ptrdiff_t>(pos));
    }
    view_dirty_.clear();
  }
  view_.now = now;
}

std::optional<double> Scheduler::next_retry_at() const {
  std::optional<double> at;
  for (JobId id : held_back_)
    if (const auto it = active_.find(id);
        it != active_.end() && it->second.state == JobState::Queued && !it->second.cancel_requested)
      at = std::min(at.value_or(it->second.not_before), it->second.not_before);
  return at;
}

void Scheduler::stop(JobId id, StopReason why, const std::string& reason) {
  if (stopping_.count(id)) return;
  stopping_[id] = why;
  view_dirty_.push_back(id);
  executor_.stop(id, options_.grace_s);
  const auto& job = active_.at(id);
  say(fmt::format("job {} ({}): stopping: {}", id, job.spec.name, reason));
  store_.note(id, "stopping: " + reason, clock_.now());
}

void Scheduler::start(const StartDecision& decision, double now) {
  const JobRecord& queued = active_.at(decision.job);
  std::vector<std::string> slot_ids;
  for (int s : decision.slots) slot_ids.push_back(slots_.at(static_cast<size_t>(s)).id);
  const auto attempt = store_.start_attempt(decision.job, slot_ids, now);
  if (!attempt) {  // cancelled or changed by another process since we looked
    reload(decision.job);
    return;
  }
  // The row as JobTable::start_attempt wrote it, without reading it back.
  JobRecord& job = active_.at(decision.job);
  job.state = JobState::Running;
  job.waited_s += std::max(0.0, now - queued.queued_since);
  job.attempts += 1;
  job.attempt_number = job.attempts;
  job.attempt_id = *attempt;
  job.slots = std::move(slot_ids);
  job.started_at = now;
  job.pid = 0;
  start_checkpoint_[job.id] = job.checkpoint_step;
  hold(job.id, decision.slots);
  --queued_;
  view_dirty_.push_back(job.id);
  Launch launch = launch_for(job);
  try {
    const int64_t pid = executor_.start(launch);
    if (pid != 0) store_.set_attempt_pid(*attempt, pid);  // 0 (no process) is what the row holds already
    active_.at(decision.job).pid = pid;
    say(fmt::format("job {} ({}): queued -> running on {} (attempt {})", job.id, job.spec.name,
                    fmt::join(job.slots, ","), job.attempt_number));
  } catch (const Error& e) {
    ExitStatus failed;
    failed.job = job.id;
    failed.attempt_id = *attempt;
    failed.exit_code = 127;
    failed.error = e.what();
    say(fmt::format("job {} ({}): could not start: {}", job.id, job.spec.name, e.what()));
    handle_exit(failed);
  }
}

double Scheduler::slot_utilization(size_t i) const {
  const JobId owner = slot_owner_[i];
  const auto u = owner ? utilization_.find(owner) : utilization_.end();
  return u == utilization_.end() ? -1.0 : u->second;
}

SlotStatus Scheduler::slot_status(size_t i, double now) const {
  const Slot& slot = slots_.at(i);
  return SlotStatus{slot.id, to_string(slot.kind), slot.profile, slot.device, slot_owner_[i], slot_utilization(i), now};
}

void Scheduler::write_slot_status(double now) {
  auto row = [&](size_t i) { return slot_status(i, now); };
  auto utilization = [&](size_t i) { return slot_utilization(i); };
  // Only the rows of slots that changed hands (or whose job's utilisation changed) since the last write are
  // written again, so a row's updated_at is when it last changed; the whole table when the slots changed.
  if (written_owner_.size() != slots_.size() || slots_changed_ || status_stale_) {
    std::vector<SlotStatus> out;
    written_owner_.assign(slots_.size(), 0);
    written_utilization_.assign(slots_.size(), -1);
    for (size_t i = 0; i < slots_.size(); ++i) {
      out.push_back(row(i));
      written_owner_[i] = out.back().job;
      written_utilization_[i] = out.back().utilization;
    }
    store_.write_slots(out);
  } else {
    std::sort(status_dirty_.begin(), status_dirty_.end());
    status_dirty_.erase(std::unique(status_dirty_.begin(), status_dirty_.end()), status_dirty_.end());
    std::vector<SlotStatus> changed;
    for (int s : status_dirty_) {
      const auto i = static_cast<size_t>(s);
      if (i >= slots_.size()) continue;
      const double u = utilization(i);
      if (slot_owner_[i] == written_owner_[i] && u == written_utilization_[i]) continue;
      changed.push_back(row(i));
      written_owner_[i] = slot_owner_[i];
      written_utilization_[i] = u;
    }
    if (!changed.empty()) store_.update_slots(changed);
  }
  status_dirty_.clear();
  status_stale_ = false;
  if (slots_changed_ || now - last_heartbeat_ >= 2.0) {
    store_.set_scheduler_info({static_cast<int64_t>(::getpid()), to_string(policy_.spec), now, metrics_url_,
                               pricer_.rate()});
    last_heartbeat_ = now;
  }
  slots_changed_ = false;
  last_status_write_ = now;
}

void Scheduler::step() {
  const auto pass_start = std::chrono::steady_clock::now();
  pass();
  if (listener_) listener_->on_pass(seconds_since(pass_start));
}

void Scheduler::pass() {
  double now = clock_.now();
  const ExecUpdate update = executor_.poll(now);
  for (const auto& lines : update.events) handle_events(lines);
  for (const auto& exit : update.exits) handle_exit(exit);
  for (const auto& usage : update.usage) {
    utilization_[usage.job] = usage.utilization;
    if (const auto held = held_.find(usage.job); held != held_.end())
      status_dirty_.insert(status_dirty_.end(), held->second.begin(), held->second.end());
  }
  if (store_.changed_elsewhere()) reload();

  // A cancel of a running job arrives only with a reload (another process set it in the store).
  if (check_cancels_)
    for (const auto& [id, job] : active_)
      if (job.state == JobState::Running && job.cancel_requested) stop(id, StopReason::Cancel, "cancelled by user");
  check_cancels_ = false;
  price_work();
  if (before_decide_) before_decide_();

  now = clock_.now();
  refresh_view(now);
  const Decisions decisions = policy_.decide(view_);
  for (const auto& p : decisions.preemptions)
    if (active_.count(p.job)) stop(p.job, StopReason::Preempt, "preempted " + p.reason);
  for (const auto& r : decisions.resizes)
    if (active_.count(r.job)) request_batch_size(r.job, r.batch_size, "policy " + to_string(policy_.spec), now);
  for (const auto& s : decisions.starts)
    if (active_.count(s.job)) start(s, now);

  const bool changed = !update.exits.empty() || !decisions.starts.empty() || !decisions.preemptions.empty();
  if (changed || now - last_status_write_ >= 2.0) write_slot_status(now);
  check_runnable();
}

void Scheduler::check_runnable() {
  if (!options_.slots_fixed || (!runnable_all_ && runnable_dirty_.empty())) return;
  // Once per distinct need and slot set: a queue of thousands asks for a handful of shapes.
  const auto reason_for = [&](const Need& need) -> const std::string& {
    const auto key = std::make_tuple(need.what, need.replicas, need.min_memory_mb);
    auto it = reason_of_need_.find(key);
    if (it == reason_of_need_.end()) it = reason_of_need_.emplace(key, unrunnable_reason(need, slots_)).first;
    return it->second;
  };
  const auto check = [&](JobId id) {
    const auto job = active_.find(id);
    const std::string reason =
        job != active_.end() && job->second.state == JobState::Queued
            ? reason_for(policy_.spec.dynamic_batch ? least_need(job->second.spec) : job->second.spec.need)
            : "";
    const auto was = unrunnable_.find(id);
    if (reason.empty()) {
      if (was == unrunnable_.end()) return;
      unrunnable_.erase(was);
      if (job == active_.end() || job->second.state != JobState::Queued) return;
      job->second.reason = "runnable again: the slots changed";
      store_.set_reason(id, job->second.reason);
      return;
    }
    if (was != unrunnable_.end() && was->second == reason) return;
    unrunnable_[id] = reason;
    job->second.reason = reason;
    store_.set_reason(id, reason);
    say(fmt::format("job {} ({}): {}", id, job->second.spec.name, reason));
  };
  if (runnable_all_) {
    for (auto it = unrunnable_.begin(); it != unrunnable_.end();)  // gone since: not checked below
      it = active_.count(it->first) ? std::next(it) : unrunnable_.erase(it);
    for (const auto& [id, job] : active_) check(id);
  } else {
    for (JobId id : runnable_dirty_) check(id);
  }
  runnable_all_ = false;
  runnable_dirty_.clear();
}

void Scheduler::run(bool until_empty, const std::function<bool()>& should_stop, const std::function<void()>& after_step,
                    const std::function<bool()>& hurry) {
  if (!recovered_) recover();
  bool again = false;
  while (!should_stop()) {
    slots_offered_ = false;
    step();
    if (until_empty && active_.size() == unrunnable_.size()) {
      if (!unrunnable_.empty()) say(fmt::format("{} job(s) left queued that can never run here", unrunnable_.size()));
      return;
    }
    if (after_step) after_step();
    again = slots_offered_ && !again;  // jobs start on slots offered between passes now, not a tick later
    if (again) continue;
    const double now = clock_.now();
    clock_.wait_until(std::min(now + options_.tick_s, executor_.next_event_time(now)));
  }
  shutdown(hurry);
}

void Scheduler::shutdown(const std::function<bool()>& hurry) {
  for (const auto& [id, job] : active_)
    if (job.state == JobState::Running) stop(id, StopReason::Shutdown, "the scheduler is shutting down");
  const double deadline = clock_.now() + options_.grace_s + 5;
  bool hurried = false;
  while (clock_.now() < deadline &&
         std::any_of(active_.begin(), active_.end(), [](const auto& kv) { return kv.second.state == JobState::Running; })) {
    if (!hurried && hurry && hurry()) {
      hurried = true;
      say("asked again to stop: killing the jobs still running (they resume from their last checkpoints)");
      for (const auto& [id, job] : active_)
        if (job.state == JobState::Running) executor_.stop(id, 0);
    }
    const ExecUpdate update = executor_.poll(clock_.now());
    for (const auto& lines : update.events) handle_events(lines);
    for (const auto& exit : update.exits) handle_exit(exit);
    clock_.wait_until(clock_.now() + 0.1);
  }
  write_slot_status(clock_.now());
}

}  // namespace ragmig::sched
