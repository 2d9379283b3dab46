// What `ragmig run` and `ragmig batch` share to host a scheduler on this machine: the state folder's lock
// (one scheduler per folder) and the slots the machine offers.
#pragma once

#include <string>
#include <vector>

#include "core/file_lock.h"
#include "gpu/inventory.h"
#include "sched/slot.h"
#include "sched/store.h"

namespace ragmig::apps {

/// Takes <state>/scheduler.lock; ConfigError naming the running scheduler's pid when another holds it.
FileLock take_scheduler_lock(sched::Store& store, const std::string& state_dir);

/// The scheduler's slots from the inventory; DeviceError saying why when there are none.
std::vector<sched::Slot> machine_slots(const gpu::Inventory& inventory);

/// "cpu:0 (cpu), cpu:1 (cpu)"
std::string describe_slots(const std::vector<sched::Slot>& slots);

}  // namespace ragmig::apps
