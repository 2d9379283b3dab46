// Attempt ends live in a heap keyed by time; a stop moves a job's end, and the old heap entry is skipped
// by its version. Work is counted in iterations, so an attempt on a slower slice simply takes longer.
#include "sim/sim_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "sched/dynamic_batch.h"

namespace ragmig::sim {

SimExecutor::SimExecutor(const ThroughputModel& model, SimCosts costs, sched::Clock& clock, bool keep_timeline)
    : model_(model), costs_(costs), clock_(clock), keep_timeline_(keep_timeline) {}

void SimExecutor::add_job(sched::JobId id, const std::string& type, double iterations, int64_t batch_size,
                          double memory_mb, double fixed_mb) {
  Job& job = jobs_[id];
  job.type = type;
  job.remaining = iterations;
  job.batch = batch_size;
  job.fixed_mb = fixed_mb;
  if (batch_size > 0) job.per_sample_mb = (memory_mb - fixed_mb) / static_cast<double>(batch_size);
}

void SimExecutor::request_batch_size(sched::JobId id, const std::string&, int64_t batch_size) {
  if (const auto it = jobs_.find(id); it != jobs_.end() && it->second.batch > 0) it->second.batch = batch_size;
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
  job.out_of_memory = false;
  job.attempt_id = launch.attempt_id;
  job.started = now;
  job.productive_from = now + (job.resumed ? costs_.restart_s : 0.0);
  job.end_at = job.productive_from + job.remaining * job.seconds_per_iteration;
  if (job.batch > 0) {
    // What a GPU worker reports (train/trainer.cpp): its batch, peak memory and the batch-independent part.
    double least = std::numeric_limits<double>::infinity();
    for (const auto& slot : launch.slots)
      least = std::min(least, static_cast<double>(sched::slot_memory_mb(slot)));
    const double need = job.fixed_mb + job.per_sample_mb * static_cast<double>(job.batch);
    job.out_of_memory = need > least;
    job.events.push_back(fmt::format(R"({{"event":"start","step":0,"batch_size":{}}})", job.batch));
    job.events.push_back(job.out_of_memory
                             ? fmt::format(R"({{"event":"oom","batch_size":{}}})", job.batch)
                             : fmt::format(R"({{"event":"progress","step":0,"batch_size":{},"memory_mb":{},"state_memory_mb":{}}})",
                                           job.batch, need, job.fixed_mb));
    if (job.out_of_memory) job.end_at = job.productive_from;
    with_events_.push_back(launch.job);
  }
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
  for (const sched::JobId id : with_events_) {
    const auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.events.empty()) continue;
    Job& job = it->second;
    for (const auto& line : job.events) job.events_offset += static_cast<int64_t>(line.size() + 1);
    update.events.push_back({id, job.attempt_id, std::move(job.events), job.events_offset});
    job.events.clear();
  }
  with_events_.clear();
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
    status.exit_code = job.stopping ? 75 : job.out_of_memory ? 1 : 0;
    status.stop_requested = job.stopping;
    if (job.stopping) ++preemptions_;
    if (keep_timeline_)
      for (const auto& [slot, profile] : job.slots)
        timeline_.push_back({slot, profile, e.job, job.started, e.at,
                             job.stopping ? "preempted" : job.out_of_memory ? "out of memory" : "done"});
    update.exits.push_back(status);
    if (!job.stopping && !job.out_of_memory) jobs_.erase(it);  // done: nothing more to know about it
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
