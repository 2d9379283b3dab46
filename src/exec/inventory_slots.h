// The machine's slots for the scheduler: the gpu module's inventory (MIG devices, whole GPUs, or CPU
// slots without a GPU) as sched::Slot, with compute slices, memory, speed and the GPU they belong to.
#pragma once

#include <vector>

#include "gpu/inventory.h"
#include "sched/slot.h"

namespace ragmig::exec {

/// One sched::Slot per inventory slot. A whole GPU has 7 compute slices and speed 1; a MIG instance the
/// compute slices its profile names and speed slices / 7 (a first-order model: MISO measured that small
/// slices are often relatively faster, which the simulator's throughput tables capture); a CPU slot speed 1.
std::vector<sched::Slot> scheduler_slots(const gpu::Inventory& inventory);

}  // namespace ragmig::exec
