// The queue as a question: the queued GPU jobs (id, need, priority), and each plannable GPU's instances with
// the busy ones marked.
#include "exec/queue_partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace ragmig::exec {

std::set<std::string> busy_slots(const sched::ClusterView& view) {
  std::set<std::string> busy;
  for (const auto& job : view.jobs)
    for (int s : job.slots) busy.insert(view.slots[static_cast<size_t>(s)].id);
  return busy;
}

gpu::GpuState with_busy(const PlannableGpu& g, const std::set<std::string>& busy) {
  gpu::GpuState state = g.state;
  for (size_t k = 0; k < state.instances.size(); ++k) {
    const bool held = k < g.slot_ids.size() && !g.slot_ids[k].empty() && busy.count(g.slot_ids[k]);
    state.instances[k].busy = state.instances[k].busy || held;
  }
  return state;
}

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

std::string queue_question(const sched::ClusterView& view, const std::vector<PlannableGpu>& gpus) {
  // Each queued GPU job by id: the plan reserves instances for jobs and holds others back by id, so one job
  // taking another's place in the queue (same need and priority) is a new question.
  std::string text;
  for (const auto& job : view.jobs)
    if (!job.running() && !job.need.cpu)
      text += fmt::format("{}:{}@{}x{};", job.id, job.need.what, job.priority, job.need.replicas);
  if (text.empty() || gpus.empty()) return "";
  const std::set<std::string> busy = busy_slots(view);
  for (const auto& g : gpus) {
    const gpu::GpuState state = with_busy(g, busy);
    text += fmt::format("|{}:", state.index);
    for (const auto& inst : state.instances)
      text += gpu::to_string(*state.catalog, inst.placement) + (inst.busy ? "b" : "i") + "+";
  }
  return text;
}

}  // namespace ragmig::exec
