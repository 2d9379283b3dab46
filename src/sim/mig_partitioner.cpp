// The partitioner's bookkeeping around gpu::plan_partitions: which instances are busy (from the scheduler's
// view), what the queue asks for (as exact profiles, so that what the planner creates is what placement
// accepts), and which instances are in flux while a GPU is re-partitioned.
#include "sim/mig_partitioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "gpu/mig_catalog.h"
#include "gpu/planner.h"

namespace ragmig::sim {
namespace {

// At most this many priority levels reach the planner (its limit is 18); lower ones share the last.
constexpr size_t kPriorityLevels = 16;

}  // namespace

std::string smallest_profile(const gpu::GpuCatalog& catalog, const sched::Need& need) {
  SimGpu probe;
  probe.catalog = &catalog;
  probe.mig = MigMode::Fixed;
  const gpu::MigProfile* best = nullptr;
  for (size_t i = 0; i < catalog.profiles.size(); ++i) {
    const auto& p = catalog.profiles[i];
    if (p.media_extensions()) continue;
    const auto slots = gpu_slots(probe, {gpu::Placement{static_cast<int>(i), p.starts.front()}});
    if (!sched::fits(need, slots.front())) continue;
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
  if (memory_need) d.memory_mib = need.min_memory_mb;
  else d.profile = catalog.find_profile(need.what) ? need.what : smallest;
  return d;
}

MigPartitioner::MigPartitioner(Cluster cluster) : cluster_(std::move(cluster)), pending_(cluster_.gpus.size()) {}

std::vector<sched::Slot> MigPartitioner::slots() const {
  Cluster offered = cluster_;
  for (size_t i = 0; i < offered.gpus.size(); ++i) {
    if (!pending_[i]) continue;
    gpu::Layout stays;
    for (const auto& p : offered.gpus[i].layout)
      if (std::find(pending_[i]->begin(), pending_[i]->end(), p) != pending_[i]->end()) stays.push_back(p);
    offered.gpus[i].layout = std::move(stays);
  }
  return cluster_slots(offered);
}

std::vector<MigPartitioner::Change> MigPartitioner::plan(const sched::ClusterView& view) {
  // Busy instances, by slot id.
  std::set<std::string> busy;
  for (const auto& job : view.jobs)
    for (int s : job.slots) busy.insert(view.slots[static_cast<size_t>(s)].id);
  // The queue as (need, priority) -> replicas.
  std::map<std::pair<std::string, int64_t>, int> queued;
  std::map<std::string, sched::Need> needs;
  std::set<int64_t, std::greater<>> priorities;
  for (const auto& job : view.jobs) {
    if (job.running() || job.need.cpu) continue;
    queued[{job.need.what, job.priority}] += job.need.replicas;
    needs.emplace(job.need.what, job.need);
    priorities.insert(job.priority);
  }
  std::map<int64_t, int> level;  // priority -> planner priority, highest = most levels
  int rank = static_cast<int>(std::min(priorities.size(), kPriorityLevels));
  for (int64_t p : priorities) level[p] = std::max(rank--, 1);

  // GPUs open to planning, grouped by model: demands are exact profiles of one model.
  std::map<const gpu::GpuCatalog*, std::vector<int>> groups;
  for (const auto& g : cluster_.gpus)
    if (g.mig == MigMode::Auto && !pending_[static_cast<size_t>(g.index)]) groups[g.catalog].push_back(g.index);

  std::string question;
  for (const auto& [key, count] : queued) question += fmt::format("{}@{}x{};", key.first, key.second, count);
  for (const auto& [catalog, indices] : groups)
    for (int i : indices) {
      const SimGpu& g = cluster_.gpus[static_cast<size_t>(i)];
      question += fmt::format("|{}:{}", i, gpu::to_string(*catalog, g.layout));
      for (const auto& s : gpu_slots(g, g.layout)) question += busy.count(s.id) ? "b" : "i";
    }
  if (queued.empty() || groups.empty() || question == last_question_) return {};
  last_question_ = question;

  std::vector<Change> changes;
  for (const auto& [catalog, indices] : groups) {
    std::map<std::tuple<std::string, int64_t, int>, int> counts;  // (profile, memory, planner priority) -> replicas
    for (const auto& [key, count] : queued)
      if (const auto d = demand_for(*catalog, needs.at(key.first)))
        counts[{d->profile, d->memory_mib, level.at(key.second)}] += count;
    if (counts.empty()) continue;
    std::vector<gpu::Demand> demands;
    for (const auto& [key, count] : counts)
      demands.push_back({std::get<0>(key), std::get<1>(key), count, std::get<2>(key)});
    std::vector<gpu::GpuState> states;
    for (int i : indices) {
      const SimGpu& g = cluster_.gpus[static_cast<size_t>(i)];
      gpu::GpuState state;
      state.index = i;
      state.catalog = catalog;
      const auto slots = gpu_slots(g, g.layout);
      for (size_t k = 0; k < g.layout.size(); ++k)
        state.instances.push_back({g.layout[k], busy.count(slots[k].id) > 0, -1});
      states.push_back(std::move(state));
    }
    const gpu::PartitionPlan plan = gpu::plan_partitions(states, demands);
    for (const auto& gp : plan.gpus)
      if (!gp.steps.empty()) changes.push_back({gp.index, gp.target, gp.steps.size()});
  }
  return changes;
}

void MigPartitioner::begin(const Change& change) { pending_[static_cast<size_t>(change.gpu)] = change.target; }

void MigPartitioner::finish(int gpu) {
  auto& pending = pending_[static_cast<size_t>(gpu)];
  if (!pending) return;
  cluster_.gpus[static_cast<size_t>(gpu)].layout = std::move(*pending);
  pending.reset();
}

}  // namespace ragmig::sim
