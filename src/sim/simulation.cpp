// The simulation driver. It owns no scheduling logic: it moves the clock, submits arrivals, applies MIG
// re-partitions when they are done, and calls Scheduler::step(); the outcomes are read back from its job table.
#include "sim/simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/clock.h"
#include "core/error.h"
#include "gpu/mig_catalog.h"
#include "sched/dynamic_batch.h"
#include "sched/scheduler.h"
#include "sched/store.h"
#include "exec/queue_partition.h"
#include "sim/memory_jobs.h"
#include "sim/mig_partitioner.h"
#include "sim/throughput.h"
#include "sim/sim_clock.h"

namespace ragmig::sim {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Most replicas of `need` that one GPU can hold at once.
int replicas_per_gpu(const sched::Need& need, const SimGpu& g) {
  if (g.mig != MigMode::Auto) {
    int n = 0;
    for (const auto& s : gpu_slots(g, g.layout)) n += sched::fits(need, s);
    return n;
  }
  const std::string profile = exec::smallest_profile(*g.catalog, need);
  if (profile.empty()) return 0;
  const auto& p = g.catalog->profile(profile);
  return std::min(p.max_instances, g.catalog->compute_slices / p.compute_slices);
}

}  // namespace

exec::SliceSpeeds slice_speeds(const ThroughputModel& model, const std::string& type) {
  exec::SliceSpeeds s{};
  const double whole = seconds_per_iteration(model, type, SlotShape{sched::SlotKind::Mig, "", 7});
  for (int g = 1; g <= 7; ++g)
    s[static_cast<size_t>(g)] = whole / seconds_per_iteration(model, type, SlotShape{sched::SlotKind::Mig, "", g});
  return s;
}

bool placeable(const sched::Need& need, const Cluster& cluster) {
  int64_t room = 0;
  if (need.cpu) room = cluster.cpu_slots;
  else
    for (const auto& g : cluster.gpus) room += replicas_per_gpu(need, g);
  return room >= need.replicas;
}

std::vector<std::string> split_policy_list(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  out.push_back(current);
  for (const auto& p : out)
    if (p.empty()) throw ConfigError(fmt::format("policy list '{}': empty entry", text));
  return out;
}

namespace {

sched::JobSpec job_spec(const SimJob& j) {
  sched::JobSpec spec;
  spec.name = j.name;
  spec.argv = {"sim"};
  spec.need = j.need;
  spec.priority = j.priority;
  spec.estimate_s = j.estimate_s;
  spec.batch_size = j.batch_size;
  spec.min_batch_size = j.min_batch_size;
  return spec;
}

// The jobs some slot of the cluster can hold (with dynamic batch, at the smallest batch a resizable job may start
// at); the others are counted in `unplaceable`.
std::vector<const SimJob*> placeable_jobs(const std::vector<SimJob>& all_jobs, const Cluster& cluster,
                                          bool dynamic_batch, size_t& unplaceable) {
  std::vector<const SimJob*> jobs;
  std::map<std::string, bool> fits_somewhere;  // by need: traces repeat a handful of needs
  for (const auto& j : all_jobs) {
    // With dynamic batch a resizable job may start smaller, by the memory the scheduler's prior gives it there.
    const sched::Need need = dynamic_batch ? sched::least_need(job_spec(j)) : j.need;
    const auto [it, fresh] =
        fits_somewhere.try_emplace(fmt::format("{}/{}", sched::to_string(need), need.min_memory_mb));
    if (fresh) it->second = placeable(need, cluster);
    if (it->second)
      jobs.push_back(&j);
    else
      ++unplaceable;
  }
  return jobs;
}

exec::RebalanceOptions rebalance_options(const SimOptions& options, bool dynamic_batch) {
  exec::RebalanceOptions rebalance;
  rebalance.migrate = options.migrate;
  rebalance.checkpoint_s = options.costs.checkpoint_s;
  rebalance.restart_s = options.costs.restart_s;
  rebalance.mig_step_s = options.costs.mig_step_s;
  rebalance.gain_factor = options.gain_factor;
  rebalance.min_interval_s = options.min_interval_s;
  rebalance.efficiency_weight = options.efficiency_weight;
  rebalance.drain_after_s = options.drain_after_s;
  rebalance.shrink = dynamic_batch;
  return rebalance;
}

}  // namespace

SimResult simulate(const std::vector<SimJob>& all_jobs, const Cluster& cluster, const ThroughputModel& model,
                   const SimOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  SimResult result;
  const bool dynamic_batch = sched::parse_policy_spec(options.policy).dynamic_batch;
  const std::vector<const SimJob*> jobs = placeable_jobs(all_jobs, cluster, dynamic_batch, result.unplaceable);

  const double first_arrival = jobs.empty() ? 0.0 : jobs.front()->arrival;
  SimClock clock(first_arrival);
  // Run folders are named but never made: nothing in the simulator writes files (but the SQLite store, if asked).
  std::unique_ptr<sched::JobTable> table;
  if (options.sqlite_state_dir.empty())
    table = std::make_unique<MemoryJobs>((std::filesystem::temp_directory_path() / "ragmig-sim").string());
  else
    table = std::make_unique<sched::Store>(options.sqlite_state_dir);
  sched::JobTable& store = *table;
  SimExecutor executor(model, options.costs, clock, options.keep_timeline);
  std::unordered_map<sched::JobId, const std::string*> type_of;
  std::map<std::string, exec::SliceSpeeds> speeds;  // per job type
  auto speed_of = [&](const sched::JobView& job) {
    const auto t = type_of.find(job.id);
    const std::string& type = t == type_of.end() ? std::string() : *t->second;
    auto it = speeds.find(type);
    if (it == speeds.end()) it = speeds.emplace(type, slice_speeds(model, type)).first;
    return it->second;
  };
  MigPartitioner partitioner(cluster, speed_of, rebalance_options(options, dynamic_batch));
  sched::SchedulerOptions sched_options;
  sched_options.policy = options.policy;
  sched_options.tick_s = options.tick_s;
  sched::Scheduler scheduler(store, executor, clock, partitioner.slots(), sched_options);
  result.policy = sched::to_string(scheduler.policy().spec);

  const bool has_auto = cluster.has_auto();
  // While jobs wait, a pass every tick where time alone can change a decision: a preemptive policy (min_run,
  // quanta), dynamic batch, MIG plans. Elsewhere a pass starts nothing unless something happened (Policy::
  // preemptive), so the simulation goes from event to event: the same schedule in fewer passes (fifo on Philly's
  // trace over 200 V100s: 156,282 instead of 398,323).
  const bool ticks_decide = scheduler.policy().preemptive || dynamic_batch || has_auto;
  size_t next = 0;
  double last_now = -1;
  int passes_at_now = 0;
  while (true) {
    const double now = clock.now();
    passes_at_now = now == last_now ? passes_at_now + 1 : 0;
    last_now = now;
    RAGMIG_CHECK(passes_at_now < 1000, fmt::format("the simulation makes no progress at t = {}", now));
    for (; next < jobs.size() && jobs[next]->arrival <= now; ++next) {
      const SimJob& j = *jobs[next];
      const sched::JobId id = scheduler.submit(job_spec(j));
      executor.add_job(id, j.type, j.iterations, j.batch_size, static_cast<double>(j.need.min_memory_mb), j.memory_fixed_mb);
      type_of[id] = &j.type;
    }

    scheduler.step();
    ++result.steps;
    if (options.on_progress && result.steps % std::max<size_t>(options.progress_every, 1) == 0)
      options.on_progress(
          {now - first_arrival, next, jobs.size(), scheduler.queued_jobs(), executor.running(), result.steps});

    bool again = false;  // slots changed: pass again at once, so that jobs start on them now
    if (has_auto) {
      const auto& view = scheduler.cluster_view();
      const auto actions = partitioner.update(view, now, scheduler.policy().queue_order(view));
      for (sched::JobId id : actions.stop) scheduler.migrate(id, "to a better MIG layout");
      if (actions.slots_changed) {
        scheduler.set_slots(partitioner.slots(), partitioner.awaiting(), partitioner.waiting());
        again = true;
      }
    }

    double wake = std::min(next < jobs.size() ? jobs[next]->arrival : kNever, executor.next_event_time(now));
    wake = std::min(wake, partitioner.next_event());
    if (const auto retry = scheduler.next_retry_at(); retry && *retry > now) wake = std::min(wake, *retry);
    const bool waiting = scheduler.queued_jobs() > 0;
    if (waiting && ticks_decide && (executor.running() > 0 || wake < kNever))
      wake = std::min(wake, now + options.tick_s);
    if (again) wake = now;
    if (wake == kNever) {
      // Nothing runs, arrives or changes: done, or jobs wait for room that will never come.
      RAGMIG_CHECK(!waiting, fmt::format("{} jobs wait on an idle cluster that cannot place them",
                                         scheduler.queued_jobs()));
      break;
    }
    clock.wait_until(wake);
  }
  if (options.keep_timeline)
    for (const auto& [gpu, start, end] : partitioner.history())
      result.timeline.push_back({fmt::format("gpu{}", gpu), "", 0, start, end, "repartition"});
  result.repartitions = partitioner.repartitions();
  result.migrations = partitioner.migrations();

  std::vector<JobOutcome> outcomes;
  for (const auto& job : store.job_times())
    outcomes.push_back({job.submitted_at, job.finished_at, job.waited_s});
  result.metrics = summarize(outcomes, executor.busy_slice_seconds(), cluster.capacity());
  result.preemptions = executor.preemptions();
  if (options.keep_timeline) {
    auto t = executor.timeline();
    t.insert(t.end(), result.timeline.begin(), result.timeline.end());
    result.timeline = std::move(t);
  }
  result.wall_s = seconds_since(wall_start);
  return result;
}

}  // namespace ragmig::sim
