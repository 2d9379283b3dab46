// Slot helpers: what fits where, and the CPU slots a machine without GPUs offers.
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

std::vector<Slot> cpu_slots(int n) {
  std::vector<Slot> slots;
  for (int i = 0; i < n; ++i) {
    Slot s;
    s.id = "cpu" + std::to_string(i);
    slots.push_back(s);
  }
  return slots;
}

}  // namespace ragmig::sched
