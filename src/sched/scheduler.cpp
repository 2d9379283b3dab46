// The loop's bookkeeping. The store is the truth; `active_` mirrors its queued and running jobs and is
// re-read whenever another process commits (a submit or a cancel) or a conditional transition loses.
#include "sched/scheduler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/error.h"

namespace ragmig::sched {
namespace {

std::string describe(const ExitStatus& s) {
  if (!s.known) return "ended while no scheduler watched (exit status unknown)";
  if (s.signal) return fmt::format("killed by signal {}", s.signal);
  return fmt::format("exit code {}", s.exit_code);
}

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

double retry_delay(int64_t failures, double backoff_s, double backoff_max_s) {
  if (failures < 1) return 0;
  return std::min(backoff_max_s, backoff_s * std::pow(2.0, static_cast<double>(std::min<int64_t>(failures - 1, 60))));
}

Scheduler::Scheduler(Store& store, Executor& executor, Clock& clock, std::vector<Slot> slots,
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
}

void Scheduler::say(const std::string& line) const {
  if (log_) log_(line);
}

void Scheduler::reload() {
  active_.clear();
  for (auto& job : store_.jobs(/*active_only=*/true)) active_[job.id] = std::move(job);
  for (auto it = stopping_.begin(); it != stopping_.end();) {
    it = active_.count(it->first) ? std::next(it) : stopping_.erase(it);
  }
}

void Scheduler::reload(JobId id) {
  auto job = store_.job(id);
  if (job && !is_terminal(job->state)) {
    active_[id] = std::move(*job);
  } else {
    active_.erase(id);
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
  for (const auto& line : lines.lines) {
    const auto event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object()) continue;  // the store keeps the line; progress only reads what parses
    const std::string kind = event.value("event", std::string());
    const auto step = event.find("step");
    if (step != event.end() && step->is_number_integer()) {
      if (kind == "checkpoint") progress.checkpoint_step = step->get<int64_t>();
      if (kind == "progress" || kind == "start" || kind == "done" || kind == "preempted")
        progress.step = step->get<int64_t>();
    }
    const auto rate = event.find("samples_per_s");
    if (kind == "progress" && rate != event.end() && rate->is_number()) progress.samples_per_s = rate->get<double>();
  }
  store_.record_events(lines.job, lines.attempt_id, lines.lines, lines.offset, progress);
  auto it = active_.find(lines.job);
  if (it != active_.end()) {
    it->second.events_offset = lines.offset;
    if (progress.step) it->second.step = *progress.step;
    if (progress.checkpoint_step) it->second.checkpoint_step = *progress.checkpoint_step;
  }
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
  const auto stop = stopping_.find(job.id);
  const bool cancel = job.cancel_requested || (stop != stopping_.end() && stop->second == StopReason::Cancel);

  AttemptEnd end;
  end.exit_code = status.exit_code;
  end.signal = status.signal;
  const double ran = std::max(0.0, now - job.started_at);
  double speed = slots_.empty() ? 1.0 : 1e300;
  for (const auto& slot : launch_for(job).slots) speed = std::min(speed, slot.speed);
  if (speed > 1e299) speed = 1.0;
  end.service_s = ran * static_cast<double>(job.spec.need.replicas);
  end.work_s = ran * speed;
  const std::string how = describe(status);
  if (status.known && status.exit_code == 0) {
    end.outcome = "done";
    end.next = JobState::Done;
    end.reason = "finished";
  } else if (cancel) {
    end.outcome = "cancelled";
    end.next = JobState::Cancelled;
    end.reason = "cancelled by user (" + how + ")";
  } else if (status.known && status.exit_code == 75) {
    end.outcome = "preempted";
    end.next = JobState::Queued;
    end.reason = "preempted: checkpointed and stopped (exit 75)";
  } else if (status.stop_requested) {
    end.outcome = "preempted";
    end.next = JobState::Queued;
    end.reason = "preempted: " + how + " after the grace period";
  } else if (!status.known) {
    end.outcome = "lost";
    end.next = JobState::Queued;
    end.reason = "requeued: the attempt " + how;
  } else {
    end.outcome = "failed";
    end.failure = true;
    const int64_t failures = job.failures + 1;
    const std::string tail = log_tail(store_.run_dir(job.id), 3);
    const std::string detail = fmt::format("{} on attempt {}{}", how, job.attempt_number,
                                           tail.empty() ? "" : "; log: " + tail);
    if (failures > job.spec.max_retries) {
      end.next = JobState::Failed;
      end.reason = fmt::format("failed: {} ({} failures, max_retries {})", detail, failures, job.spec.max_retries);
    } else {
      end.next = JobState::Queued;
      const double delay = retry_delay(failures, options_.backoff_s, options_.backoff_max_s);
      end.not_before = now + delay;
      end.reason = fmt::format("retry {} of {} in {:.1f} s: {}", failures, job.spec.max_retries, delay, detail);
    }
  }
  store_.finish_attempt(job.id, status.attempt_id, end, now);
  say(fmt::format("job {} ({}): running -> {}: {}", job.id, job.spec.name, to_string(end.next), end.reason));
  stopping_.erase(job.id);
  utilization_.erase(job.id);
  reload(status.job);
}

ClusterView Scheduler::view(double now) const {
  ClusterView v;
  v.now = now;
  v.slots = slots_;
  for (const auto& [id, job] : active_) {
    JobView j;
    j.id = id;
    j.need = job.spec.need;
    j.priority = job.spec.priority;
    j.submitted_at = job.submitted_at;
    j.estimate_s = job.spec.estimate_s;
    j.service_s = job.service_s;
    j.work_s = job.work_s;
    if (job.state == JobState::Queued) {
      if (job.not_before > now) continue;  // backing off after a failure
      if (job.cancel_requested) continue;
      j.queued_since = job.queued_since;
      j.waited_s = job.waited_s + std::max(0.0, now - job.queued_since);
    } else {
      j.waited_s = job.waited_s;
      j.started_at = job.started_at;
      j.stopping = stopping_.count(id) > 0;
      double speed = 1e300;
      for (const auto& slot_id : job.slots) {
        const auto it = slot_index_.find(slot_id);
        if (it == slot_index_.end()) continue;  // a slot this scheduler does not have: the job still runs
        j.slots.push_back(it->second);
        speed = std::min(speed, slots_[static_cast<size_t>(it->second)].speed);
      }
      if (j.slots.empty()) continue;
      const double ran = std::max(0.0, now - job.started_at);
      j.service_s += ran * static_cast<double>(job.spec.need.replicas);
      j.work_s += ran * speed;
    }
    v.jobs.push_back(std::move(j));
  }
  return v;
}

void Scheduler::stop(JobId id, StopReason why, const std::string& reason) {
  if (stopping_.count(id)) return;
  stopping_[id] = why;
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
  reload(decision.job);
  const JobRecord& job = active_.at(decision.job);
  (void)queued;
  Launch launch = launch_for(job);
  try {
    const int64_t pid = executor_.start(launch);
    store_.set_attempt_pid(*attempt, pid);
    active_.at(decision.job).pid = pid;
    say(fmt::format("job {} ({}): queued -> running on {} (attempt {})", job.id, job.spec.name,
                    fmt::join(slot_ids, ","), job.attempt_number));
  } catch (const Error& e) {
    ExitStatus failed;
    failed.job = job.id;
    failed.attempt_id = *attempt;
    failed.exit_code = 127;
    say(fmt::format("job {} ({}): could not start: {}", job.id, job.spec.name, e.what()));
    handle_exit(failed);
  }
}

void Scheduler::write_slot_status(double now) {
  std::vector<SlotStatus> out;
  std::map<std::string, JobId> owner;
  for (const auto& [id, job] : active_)
    if (job.state == JobState::Running)
      for (const auto& s : job.slots) owner[s] = id;
  for (const auto& slot : slots_) {
    SlotStatus s{slot.id, to_string(slot.kind), slot.profile, slot.device, 0, -1, now};
    const auto it = owner.find(slot.id);
    if (it != owner.end()) {
      s.job = it->second;
      const auto u = utilization_.find(it->second);
      if (u != utilization_.end()) s.utilization = u->second;
    }
    out.push_back(s);
  }
  store_.write_slots(out);
  store_.set_scheduler_info(static_cast<int64_t>(::getpid()), to_string(policy_.spec), now);
  last_status_write_ = now;
}

void Scheduler::step() {
  double now = clock_.now();
  const ExecUpdate update = executor_.poll(now);
  for (const auto& lines : update.events) handle_events(lines);
  for (const auto& exit : update.exits) handle_exit(exit);
  for (const auto& usage : update.usage) utilization_[usage.job] = usage.utilization;
  if (store_.changed_elsewhere()) reload();

  for (const auto& [id, job] : active_)
    if (job.state == JobState::Running && job.cancel_requested) stop(id, StopReason::Cancel, "cancelled by user");

  now = clock_.now();
  const Decisions decisions = policy_.decide(view(now));
  for (const auto& p : decisions.preemptions)
    if (active_.count(p.job)) stop(p.job, StopReason::Preempt, "preempted " + p.reason);
  for (const auto& r : decisions.resizes) {
    const auto it = active_.find(r.job);
    if (it == active_.end()) continue;
    write_file_atomic(std::filesystem::path(store_.run_dir(r.job)) / "control.json",
                      nlohmann::json{{"batch_size", r.batch_size}}.dump() + "\n");
    store_.note(r.job, fmt::format("batch size -> {}", r.batch_size), now);
  }
  for (const auto& s : decisions.starts)
    if (active_.count(s.job)) start(s, now);

  const bool changed = !update.exits.empty() || !decisions.starts.empty() || !decisions.preemptions.empty();
  if (changed || now - last_status_write_ >= 2.0) write_slot_status(now);
}

void Scheduler::run(bool until_empty, const std::function<bool()>& should_stop) {
  recover();
  while (!should_stop()) {
    step();
    if (until_empty && active_.empty()) return;
    const double now = clock_.now();
    clock_.wait_until(std::min(now + options_.tick_s, executor_.next_event_time(now)));
  }
  shutdown();
}

void Scheduler::shutdown() {
  for (const auto& [id, job] : active_)
    if (job.state == JobState::Running) stop(id, StopReason::Shutdown, "the scheduler is shutting down");
  const double deadline = clock_.now() + options_.grace_s + 5;
  while (clock_.now() < deadline &&
         std::any_of(active_.begin(), active_.end(), [](const auto& kv) { return kv.second.state == JobState::Running; })) {
    const ExecUpdate update = executor_.poll(clock_.now());
    for (const auto& lines : update.events) handle_events(lines);
    for (const auto& exit : update.exits) handle_exit(exit);
    clock_.wait_until(clock_.now() + 0.1);
  }
  write_slot_status(clock_.now());
}

}  // namespace ragmig::sched
