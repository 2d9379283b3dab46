// Slot helpers: what fits where.
#include "sched/slot.h"

#include <fmt/format.h>

namespace ragmig::sched {

std::string to_string(SlotKind kind) {
  switch (kind) {
    case SlotKind::Cpu: return "cpu";
    case SlotKind::Gpu: return "gpu";
    case SlotKind::Mig: return "mig";
  }
  return "?";
}

bool fits(const Need& need, const Slot& slot) {
  if (need.cpu) return slot.kind == SlotKind::Cpu;
  if (slot.kind == SlotKind::Cpu) return false;
  const int64_t memory = slot.nominal_memory_mb > 0 ? slot.nominal_memory_mb : slot.memory_mb;
  return slot.compute >= need.min_compute && memory >= need.min_memory_mb;
}

std::string unrunnable_reason(const Need& need, const std::vector<Slot>& slots) {
  int fitting = 0;
  std::string offered;
  for (const auto& slot : slots) {
    if (slot.reserved_for == Slot::kVacating) continue;
    fitting += fits(need, slot) ? 1 : 0;
    offered += (offered.empty() ? "" : ", ") + slot.id + (slot.kind == SlotKind::Cpu ? "" : " (" + slot.profile + ")");
  }
  if (fitting >= need.replicas) return "";
  const std::string what = need.cpu ? "CPU slots" : "GPU slices with at least " + need.what;
  return fmt::format("unrunnable: needs {} {} at once; this scheduler has {} (of {}: {}){}", need.replicas, what,
                     fitting, slots.size(), offered.empty() ? "none" : offered,
                     need.cpu ? "; `ragmig run --cpu-slots N` offers more" : "");
}

}  // namespace ragmig::sched
