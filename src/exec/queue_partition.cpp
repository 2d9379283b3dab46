// The queue as the planner's demands: each queued GPU job's need becomes a demand on each model (an exact
// profile, or a memory need), jobs of equal need and priority are counted together, and priorities become
// the planner's levels (highest first, at most 16 distinct; lower ones share the last).
#include "exec/queue_partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace ragmig::exec {
namespace {

constexpr size_t kPriorityLevels = 16;  // the planner takes at most 18

struct Queue {
  std::map<std::pair<std::string, int64_t>, int> replicas;  // (need, priority) -> replicas
  std::map<std::string, sched::Need> needs;
  std::map<int64_t, int> level;  // priority -> planner priority
};

Queue queued_gpu_jobs(const sched::ClusterView& view) {
  Queue q;
  std::set<int64_t, std::greater<>> priorities;
  for (const auto& job : view.jobs) {
    if (job.running() || job.need.cpu) continue;
    q.replicas[{job.need.what, job.priority}] += job.need.replicas;
    q.needs.emplace(job.need.what, job.need);
    priorities.insert(job.priority);
  }
  int rank = static_cast<int>(std::min(priorities.size(), kPriorityLevels));
  for (int64_t p : priorities) q.level[p] = std::max(rank--, 1);
  return q;
}

std::set<std::string> busy_slots(const sched::ClusterView& view) {
  std::set<std::string> busy;
  for (const auto& job : view.jobs)
    for (int s : job.slots) busy.insert(view.slots[static_cast<size_t>(s)].id);
  return busy;
}

// The GPU's instances with busy set where the view or the state says so.
gpu::GpuState with_busy(const PlannableGpu& g, const std::set<std::string>& busy) {
  gpu::GpuState state = g.state;
  for (size_t k = 0; k < state.instances.size(); ++k) {
    const bool held = k < g.slot_ids.size() && !g.slot_ids[k].empty() && busy.count(g.slot_ids[k]);
    state.instances[k].busy = state.instances[k].busy || held;
  }
  return state;
}

}  // namespace

sched::Slot mig_slot(const gpu::MigProfile& profile) {
  sched::Slot s;
  s.kind = sched::SlotKind::Mig;
  s.profile = profile.name;
  s.compute = profile.compute_slices;
  s.speed = profile.compute_slices / 7.0;
  s.nominal_memory_mb = int64_t{gpu::parse_profile_name(profile.name).memory_gb} * 1024;
  s.memory_mb = s.nominal_memory_mb;
  return s;
}

std::string smallest_profile(const gpu::GpuCatalog& catalog, const sched::Need& need) {
  const gpu::MigProfile* best = nullptr;
  for (const auto& p : catalog.profiles) {
    if (p.media_extensions() || !sched::fits(need, mig_slot(p))) continue;
    if (!best || std::tie(p.compute_slices, p.memory_mib) < std::tie(best->compute_slices, best->memory_mib)) best = &p;
  }
  return best ? best->name : "";
}

std::optional<gpu::Demand> demand_for(const gpu::GpuCatalog& catalog, const sched::Need& need) {
  if (need.cpu) return std::nullopt;
  const std::string smallest = smallest_profile(catalog, need);
  if (smallest.empty()) return std::nullopt;
  gpu::Demand d;
  // The planner matches memory against the catalog's usable sizes, which are below the names' sizes that
  // sched::fits reads: whatever the planner creates for a memory need, placement accepts.
  const bool memory_need = need.what != "gpu" && !gpu::looks_like_profile_name(need.what);
  if (memory_need)
    d.memory_mib = need.min_memory_mb;
  else
    d.profile = catalog.find_profile(need.what) ? need.what : smallest;
  return d;
}

std::string queue_question(const sched::ClusterView& view, const std::vector<PlannableGpu>& gpus) {
  const Queue q = queued_gpu_jobs(view);
  if (q.replicas.empty() || gpus.empty()) return "";
  const std::set<std::string> busy = busy_slots(view);
  std::string text;
  for (const auto& [key, count] : q.replicas) text += fmt::format("{}@{}x{};", key.first, key.second, count);
  for (const auto& g : gpus) {
    const gpu::GpuState state = with_busy(g, busy);
    text += fmt::format("|{}:", state.index);
    for (const auto& inst : state.instances)
      text += gpu::to_string(*state.catalog, inst.placement) + (inst.busy ? "b" : "i") + "+";
  }
  return text;
}

std::vector<gpu::GpuPlan> plan_for_queue(const sched::ClusterView& view, const std::vector<PlannableGpu>& gpus) {
  const Queue q = queued_gpu_jobs(view);
  if (q.replicas.empty()) return {};
  const std::set<std::string> busy = busy_slots(view);
  std::map<const gpu::GpuCatalog*, std::vector<gpu::GpuState>> by_model;
  for (const auto& g : gpus) by_model[g.state.catalog].push_back(with_busy(g, busy));

  std::vector<gpu::GpuPlan> changes;
  for (const auto& [catalog, states] : by_model) {
    std::map<std::tuple<std::string, int64_t, int>, int> counts;  // (profile, memory, level) -> replicas
    for (const auto& [key, count] : q.replicas)
      if (const auto d = demand_for(*catalog, q.needs.at(key.first)))
        counts[{d->profile, d->memory_mib, q.level.at(key.second)}] += count;
    if (counts.empty()) continue;
    std::vector<gpu::Demand> demands;
    for (const auto& [key, count] : counts)
      demands.push_back({std::get<0>(key), std::get<1>(key), count, std::get<2>(key)});
    for (auto& plan : gpu::plan_partitions(states, demands).gpus)
      if (!plan.steps.empty()) changes.push_back(std::move(plan));
  }
  return changes;
}

}  // namespace ragmig::exec
