// A MIG slot for the policy tables: "<compute>g.<gb>gb" with its compute slices and memory.
#pragma once

#include <cstdint>
#include <string>

#include "sched/slot.h"

namespace ragmig::sched {

inline Slot mig(const std::string& id, int compute, int64_t gb, int group = 0) {
  Slot s;
  s.id = id;
  s.kind = SlotKind::Mig;
  s.profile = std::to_string(compute) + "g." + std::to_string(gb) + "gb";
  s.compute = compute;
  s.memory_mb = gb * 1024;
  s.group = group;
  return s;
}

}  // namespace ragmig::sched
