// The scheduler's lock and slots for run and batch (see scheduler_host.h).
#include "apps/scheduler_host.h"

#include <fmt/format.h>

#include "core/error.h"
#include "exec/inventory_slots.h"

namespace ragmig::apps {

FileLock take_scheduler_lock(sched::Store& store, const std::string& state_dir) {
  auto lock = FileLock::try_acquire(sched::scheduler_lock_path(state_dir));
  if (!lock) {
    const auto info = store.scheduler_info();
    throw ConfigError(fmt::format("another scheduler{} is running on {}",
                                  info ? fmt::format(" (pid {})", info->pid) : "", state_dir));
  }
  return std::move(*lock);
}

std::vector<sched::Slot> machine_slots(const gpu::Inventory& inventory) {
  auto slots = exec::scheduler_slots(inventory);
  if (slots.empty())
    throw DeviceError("no usable slots: " + (inventory.gpus.empty() ? std::string("no GPU")
                                                                    : "MIG is on but no instances exist; create them "
                                                                      "with `ragmig mig apply`"));
  return slots;
}

std::string describe_slots(const std::vector<sched::Slot>& slots) {
  std::string where;
  for (const auto& s : slots) where += (where.empty() ? "" : ", ") + s.id + " (" + s.profile + ")";
  return where;
}

}  // namespace ragmig::apps
