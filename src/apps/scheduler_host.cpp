// The scheduler's lock and slots for run and batch (see scheduler_host.h).
#include "apps/scheduler_host.h"

#include <fmt/format.h>

#include "apps/command.h"
#include "core/error.h"
#include "exec/inventory_slots.h"
#include "gpu/nvml_device.h"

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

void add_mig_option(CLI::App* command, std::string& mig) {
  command
      ->add_option("--mig", mig,
                   "off: use the MIG instances as they are; auto: re-partition MIG GPUs for the queue between passes "
                   "(instances no job holds only; needs root); migrate: auto, and running jobs are checkpointed and "
                   "moved to a better layout when the time won exceeds twice the cost")
      ->capture_default_str()
      ->check(CLI::IsMember({"off", "auto", "migrate"}));
}

std::shared_ptr<gpu::NvmlLibrary> open_nvml(const gpu::Inventory& inventory) {
  if (inventory.nvml_status != gpu::NvmlStatus::Available || inventory.gpus.empty()) return nullptr;
  return gpu::NvmlLibrary::try_open(inventory.nvml_library, nullptr, nullptr);
}

MigAuto start_mig_auto(const std::string& mode, const gpu::Inventory& inventory, std::shared_ptr<gpu::NvmlLibrary> nvml,
                       const std::string& who) {
  MigAuto m;
  m.who = who;
  if (mode == "off") return m;
  if (inventory.nvml_status != gpu::NvmlStatus::Available)
    throw ConfigError("--mig " + mode + " needs NVML: " + inventory.nvml_detail);
  std::vector<std::string> notes;
  if (exec::plannable_gpus(inventory.gpus, &notes).empty()) {
    std::string why;
    for (const auto& n : notes) why += (why.empty() ? "" : "; ") + n;
    throw ConfigError("--mig auto: no GPU to re-partition (" + (why.empty() ? std::string("no GPU") : why) +
                      "); turn MIG mode on with `ragmig mig apply --enable-mig` or nvidia-smi -mig 1");
  }
  // Opened for the inventory a moment ago; opening it again here throws DeviceError saying why it failed.
  m.nvml = nvml ? std::move(nvml) : std::make_shared<gpu::NvmlLibrary>(inventory.nvml_library);
  exec::RebalanceOptions rebalance;
  rebalance.migrate = mode == "migrate";
  m.partitioner = std::make_unique<exec::MachinePartitioner>(
      *m.nvml, inventory.gpus, gpu::ApplyOptions{}, [who](const std::string& line) { log_line(who + ": " + line); },
      10.0, nullptr, rebalance);
  return m;
}

bool MigAuto::after_pass(sched::Scheduler& scheduler) {
  if (!partitioner) return false;
  const auto& view = scheduler.cluster_view();
  auto changed = partitioner->after_pass(view, scheduler.policy().queue_order(view));
  for (sched::JobId id : partitioner->take_stops()) scheduler.migrate(id, "to a better MIG layout");
  if (!changed) return false;
  log_line(fmt::format("{}: {} slots: {}", who, changed->size(), describe_slots(*changed)));
  scheduler.set_slots(std::move(*changed), partitioner->awaiting());
  return true;
}

std::vector<sched::Slot> host_slots(const gpu::Inventory& inventory, const MigAuto& mig) {
  return mig.partitioner ? exec::device_slots(inventory.gpus) : machine_slots(inventory);
}

exec::ProcessExecutorOptions executor_options(std::shared_ptr<gpu::NvmlLibrary> nvml) {
  exec::ProcessExecutorOptions options;
  options.ragmig_exe = ragmig_exe();
  options.shim_exe = exec::find_shim(options.ragmig_exe);
  if (!nvml) return options;
  options.device_utilization = [nvml](const std::vector<std::string>& devices) -> std::optional<double> {
    double sum = 0;
    for (const auto& d : devices) {
      const auto percent = gpu::utilisation_by_uuid(*nvml, d);
      if (!percent) return std::nullopt;
      sum += *percent / 100.0;
    }
    return devices.empty() ? std::nullopt : std::optional<double>(sum / static_cast<double>(devices.size()));
  };
  return options;
}

std::string describe_slots(const std::vector<sched::Slot>& slots) {
  std::string where;
  for (const auto& s : slots) where += (where.empty() ? "" : ", ") + s.id + " (" + s.profile + ")";
  return where;
}

}  // namespace ragmig::apps
