// Slot helpers: what fits where.
#include "sched/slot.h"

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

}  // namespace ragmig::sched
