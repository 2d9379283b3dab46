// Attempt ends live in a heap keyed by time; a stop moves a job's end, and the old heap entry is skipped
// by its version. Work is counted in iterations, so an attempt on a slower slice simply takes longer.
#include "sim/sim_executor.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace ragmig::sim {

SimExecutor::SimExecutor(const ThroughputModel& model, SimCosts costs, sched::Clock& clock, bool keep_timeline)
    : model_(model), costs_(costs), clock_(clock), keep_timeline_(keep_timeline) {}

void SimExecutor::add_job(sched::JobId id, const std::string& type, double iterations) {
  Job& job = jobs_[id];
  job.type = type;
  job.remaining = iterations;
}

void SimExecutor::schedule(sched::JobId id, Job& job) {
  ++job.version;
  events_.push({job.end_at, id, job.version});
}

int64_t SimExecutor::start(const sched::Launch& launch) {
  const auto it = jobs_.find(launch.job);
  RAGMIG_CHECK(it != jobs_.end(), "the simulator knows every job it is asked to start");
  Job& job = it->second;
  RAGMIG_CHECK(!job.running, "a job runs one attempt at a time");
  const double now = clock_.now();
  // A job with several replicas moves at the pace of its slowest slot.
  double spi = 0;
  job.compute = 0;
  job.slots.clear();
  for (const auto& slot : launch.slots) {
    const SlotShape shape = shape_of(slot);
    spi = std::max(spi, seconds_per_iteration(model_, job.type, shape));
    job.compute += shape.compute;
    if (keep_timeline_) job.slots.emplace_back(slot.id, slot.profile);
  }
  job.seconds_per_iteration = spi > 0 ? spi : 1.0;
  job.running = true;
  job.stopping = false;
  job.attempt_id = launch.attempt_id;
  job.started = now;
  job.productive_from = now + (job.resumed ? costs_.restart_s : 0.0);
  job.end_at = job.productive_from + job.remaining * job.seconds_per_iteration;
  ++running_;
  schedule(launch.job, job);
  return 0;
}

void SimExecutor::stop(sched::JobId id, double) {
  const auto it = jobs_.find(id);
  if (it == jobs_.end() || !it->second.running || it->second.stopping) return;
  Job& job = it->second;
  const double now = clock_.now();
  // The worker checkpoints what it has done by now, then exits 75.
  const double done = std::max(0.0, now - job.productive_from) / job.seconds_per_iteration;
  job.remaining = std::max(0.0, job.remaining - done);
  job.stopping = true;
  job.resumed = true;
  job.end_at = now + costs_.checkpoint_s;
  schedule(id, job);
}

sched::ExecUpdate SimExecutor::poll(double now) {
  sched::ExecUpdate update;
  while (!events_.empty() && events_.top().at <= now) {
    const Event e = events_.top();
    events_.pop();
    auto it = jobs_.find(e.job);
    if (it == jobs_.end() || it->second.version != e.version || !it->second.running) continue;
    Job& job = it->second;
    job.running = false;
    --running_;
    busy_slice_s_ += (e.at - job.started) * job.compute;
    sched::ExitStatus status;
    status.job = e.job;
    status.attempt_id = job.attempt_id;
    status.exit_code = job.stopping ? 75 : 0;
    status.stop_requested = job.stopping;
    if (job.stopping) ++preemptions_;
    if (keep_timeline_)
      for (const auto& [slot, profile] : job.slots)
        timeline_.push_back({slot, profile, e.job, job.started, e.at, job.stopping ? "preempted" : "done"});
    update.exits.push_back(status);
    if (!job.stopping) jobs_.erase(it);  // done: nothing more to know about it
  }
  return update;
}

std::optional<sched::ExitStatus> SimExecutor::reattach(const sched::Launch& launch, int64_t) {
  // A simulation starts from an empty store, so there is never an attempt to adopt.
  sched::ExitStatus status;
  status.job = launch.job;
  status.attempt_id = launch.attempt_id;
  status.known = false;
  return status;
}

double SimExecutor::next_event_time(double) {
  while (!events_.empty()) {
    const Event& e = events_.top();
    const auto it = jobs_.find(e.job);
    if (it != jobs_.end() && it->second.version == e.version && it->second.running) return e.at;
    events_.pop();
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace ragmig::sim
