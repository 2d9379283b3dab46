// A MIG profile name starts with its compute slices ("3g.71gb"); everything else is read off the slot.
#include "exec/inventory_slots.h"

#include <cctype>

#include "core/error.h"

namespace ragmig::exec {

std::vector<sched::Slot> scheduler_slots(const gpu::Inventory& inventory) {
  std::vector<sched::Slot> out;
  for (const auto& g : inventory.slots) {
    sched::Slot s;
    s.id = g.id;
    s.profile = g.profile;
    s.memory_mb = g.memory_mib;
    s.device = g.cuda_visible_devices;
    s.group = std::max(0, g.gpu_index);
    switch (g.kind) {
      case gpu::SlotKind::Cpu:
        s.kind = sched::SlotKind::Cpu;
        s.compute = 1;
        break;
      case gpu::SlotKind::Gpu:
        s.kind = sched::SlotKind::Gpu;
        s.compute = 7;
        break;
      case gpu::SlotKind::Mig:
        s.kind = sched::SlotKind::Mig;
        s.compute = !g.profile.empty() && std::isdigit(static_cast<unsigned char>(g.profile[0])) ? g.profile[0] - '0' : 1;
        s.speed = s.compute / 7.0;
        try {
          s.nominal_memory_mb = sched::parse_need(g.profile).min_memory_mb;
        } catch (const ConfigError&) {  // a profile name ragmig does not know: its real memory counts
        }
        break;
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace ragmig::exec
