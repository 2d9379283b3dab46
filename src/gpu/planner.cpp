// The planner's search. The ranking of "more jobs by priority, then more compute" is folded into one
// integer per placement (see placement_value) so that an exact assignment solver can maximise it; the
// remaining criteria (fragmentation, steps) are compared per candidate layout.
#include "gpu/planner.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "core/error.h"
#include "gpu/assignment.h"

namespace ragmig::gpu {
namespace {

// A GPU has at most 8 compute slices and so at most 8 instances. With W = 8^rank * 64, one more job at a
// priority outweighs any number of lower-priority jobs plus all compute (< 64), so maximising the sum
// ranks layouts lexicographically by (jobs per priority from the top, compute).
constexpr int kMaxPriorityLevels = 18;
constexpr int64_t kComputeScale = 64;

int64_t placement_value(int rank, int compute) {
  int64_t w = kComputeScale;
  for (int r = 0; r < rank; ++r) w *= 8;
  return w + compute;
}

struct Candidate {
  Layout target;
  std::vector<Assignment> assignments;
  int64_t value = 0;
  int throughput = 0;
  int fragmentation = 0;
  size_t steps = 0;
  std::string key;

  // Better = more value, then less fragmentation, then fewer steps, then the smaller spec string so that
  // the answer never depends on enumeration order.
  bool better_than(const Candidate& o) const {
    return std::tie(o.value, fragmentation, steps, key) < std::tie(value, o.fragmentation, o.steps, o.key);
  }
};

GpuPlan plan_one_gpu(const GpuState& gpu_state, const std::vector<Demand>& demands, std::vector<int>& remaining,
                     const std::vector<int>& rank_of, bool enable_mig) {
  const GpuCatalog& gpu = *gpu_state.catalog;
  Layout busy;
  Layout existing;
  for (const auto& inst : gpu_state.instances) {
    existing.push_back(inst.placement);
    if (inst.busy) busy.push_back(inst.placement);
  }
  if (std::string why = layout_error(gpu, existing); !why.empty()) {
    throw ConfigError("GPU " + std::to_string(gpu_state.index) + ": the current layout is not valid on " + gpu.name +
                      ": " + why);
  }
  std::vector<int> classes;  // demands with jobs left
  for (size_t d = 0; d < demands.size(); ++d) {
    if (remaining[d] > 0) classes.push_back(static_cast<int>(d));
  }

  std::optional<Candidate> best;
  std::set<std::string> seen;
  for (const Layout& layout : enumerate_layouts(gpu, {.maximal_only = false, .profiles = {}, .base = busy})) {
    Layout free;  // instances of this layout that can take a new job
    for (const auto& p : layout) {
      if (std::find(busy.begin(), busy.end(), p) == busy.end()) free.push_back(p);
    }
    std::vector<std::vector<int64_t>> value(classes.size(), std::vector<int64_t>(free.size(), -1));
    std::vector<int> count;
    for (size_t c = 0; c < classes.size(); ++c) {
      const Demand& d = demands[static_cast<size_t>(classes[c])];
      count.push_back(remaining[static_cast<size_t>(classes[c])]);
      for (size_t s = 0; s < free.size(); ++s) {
        const MigProfile& prof = gpu.profiles[static_cast<size_t>(free[s].profile)];
        if (fits(d, prof)) value[c][s] = placement_value(rank_of[static_cast<size_t>(classes[c])], prof.compute_slices);
      }
    }
    const std::vector<int> slot_class =
        classes.empty() ? std::vector<int>(free.size(), -1) : best_assignment(value, count);

    Candidate cand;
    cand.target = busy;
    for (size_t s = 0; s < free.size(); ++s) {
      if (slot_class[s] < 0) continue;
      cand.target.push_back(free[s]);
      cand.assignments.push_back({classes[static_cast<size_t>(slot_class[s])], free[s]});
      cand.throughput += gpu.profiles[static_cast<size_t>(free[s].profile)].compute_slices;
    }
    cand.value = assignment_value(value, slot_class);
    // Idle instances that exist already stay when they fit: destroying them would cost steps for nothing,
    // and a waiting job of their profile can use them later.
    for (const auto& inst : gpu_state.instances) {
      const bool kept = std::find(cand.target.begin(), cand.target.end(), inst.placement) != cand.target.end();
      if (!kept && can_add(gpu, cand.target, inst.placement)) cand.target.push_back(inst.placement);
    }
    cand.target = canonical(std::move(cand.target));
    std::sort(cand.assignments.begin(), cand.assignments.end(),
              [](const Assignment& a, const Assignment& b) { return std::tie(a.placement, a.demand) < std::tie(b.placement, b.demand); });
    cand.key = to_string(gpu, cand.target);
    if (!seen.insert(cand.key + "|" + std::to_string(cand.value)).second) continue;
    cand.fragmentation = fragmentation(gpu, cand.target);
    cand.steps = sequence_steps(gpu, gpu_state.instances, cand.target).size();
    if (!best || cand.better_than(*best)) best = std::move(cand);
  }
  RAGMIG_CHECK(best.has_value(), "the layout of busy instances itself is always a candidate");

  GpuPlan plan;
  plan.index = gpu_state.index;
  plan.catalog = &gpu;
  plan.device_name = gpu_state.device_name;
  plan.uuid = gpu_state.uuid;
  plan.mig_enabled = gpu_state.mig_enabled;
  plan.current = gpu_state.instances;
  plan.target = best->target;
  plan.assignments = best->assignments;
  plan.throughput = best->throughput;
  plan.fragmentation = best->fragmentation;
  plan.steps = sequence_steps(gpu, gpu_state.instances, plan.target, enable_mig);
  for (const auto& a : plan.assignments) --remaining[static_cast<size_t>(a.demand)];
  return plan;
}

}  // namespace

int fragmentation(const GpuCatalog& gpu, const Layout& layout) {
  const int free_compute = gpu.compute_slices - compute_used(gpu, layout);
  int largest = 0;
  for (size_t i = 0; i < gpu.profiles.size(); ++i) {
    for (int s : gpu.profiles[i].starts) {
      if (can_add(gpu, layout, {static_cast<int>(i), s})) largest = std::max(largest, gpu.profiles[i].compute_slices);
    }
  }
  return std::max(0, free_compute - largest);
}

PartitionPlan plan_partitions(const std::vector<GpuState>& gpus, const std::vector<Demand>& demands,
                              const PlanOptions& options) {
  PartitionPlan plan;
  plan.demands = demands;
  // Priorities become ranks 0..k-1 (0 = lowest) so the weights stay small.
  std::set<int> levels;
  for (const auto& d : demands) levels.insert(d.priority);
  if (static_cast<int>(levels.size()) > kMaxPriorityLevels) {
    throw ConfigError("at most " + std::to_string(kMaxPriorityLevels) + " distinct priorities can be planned at once");
  }
  std::vector<int> rank_of;
  for (const auto& d : demands) rank_of.push_back(static_cast<int>(std::distance(levels.begin(), levels.find(d.priority))));

  std::vector<int> remaining;
  for (const auto& d : demands) remaining.push_back(d.count);

  for (const auto& g : gpus) {
    RAGMIG_CHECK(g.catalog != nullptr, "every planned GPU has a catalog");
    if (!g.mig_enabled && !options.allow_enable_mig) {
      plan.notes.push_back("GPU " + std::to_string(g.index) + " (" + g.catalog->name +
                           "): MIG mode is off; left alone (plan with --enable-mig to use it)");
      continue;
    }
    plan.gpus.push_back(plan_one_gpu(g, demands, remaining, rank_of, !g.mig_enabled));
  }

  for (size_t d = 0; d < demands.size(); ++d) {
    if (remaining[d] == 0) continue;
    bool offered = false;
    for (const auto& g : plan.gpus) {
      for (const auto& prof : g.catalog->profiles) offered = offered || fits(demands[d], prof);
    }
    std::string reason;
    if (plan.gpus.empty()) {
      reason = "no GPU to plan for";
    } else if (!offered) {
      reason = demands[d].profile.empty() ? "no MIG profile of the planned GPUs has " + what_of(demands[d]) + " of memory"
                                          : "no planned GPU offers the profile " + demands[d].profile;
    } else {
      reason = "no room: the GPUs' compute and memory slices (beside busy instances and the other placed jobs) "
               "cannot hold it now";
    }
    plan.unplaced.push_back({static_cast<int>(d), remaining[d], reason});
  }
  return plan;
}

}  // namespace ragmig::gpu
