// The scheduler's lock and slots for run and batch (see scheduler_host.h).
#include "apps/scheduler_host.h"

#include <fmt/format.h>

#include <algorithm>

#include "apps/command.h"
#include "core/cpu_threads.h"
#include "core/error.h"
#include "exec/inventory_slots.h"
#include "exec/slurm_config.h"
#include "gpu/nvml_device.h"
#include "sched/policy.h"

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

void add_mig_options(CLI::App* command, MigFlags& mig) {
  command
      ->add_option("--mig", mig.mode,
                   "off: use the MIG instances as they are; auto: re-partition MIG GPUs for the queue between passes "
                   "(instances no job holds only; needs root); migrate: auto, and running jobs are checkpointed and "
                   "moved to a better layout when the time won exceeds --gain-factor x the cost")
      ->capture_default_str()
      ->check(CLI::IsMember({"off", "auto", "migrate"}));
  exec::RebalanceOptions& r = mig.rebalance;
  command->add_option("--checkpoint-s", r.checkpoint_s, "--mig migrate: expected seconds from a stop to the exit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command->add_option("--restart-s", r.restart_s, "--mig migrate: expected seconds before a moved job progresses")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--mig-step-s", r.mig_step_s,
                   "--mig migrate: expected seconds per MIG instance destroyed or created")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command->add_option("--gain-factor", r.gain_factor, "--mig migrate: how many times its cost a move must win")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--efficiency-weight", r.efficiency_weight,
                   "--mig auto: how much a job's efficiency per slice weighs in the plan: 0 maximises summed job "
                   "speed (average JCT), 1 the work done at each job's most efficient slice size (makespan)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  command
      ->add_option("--drain-after", r.drain_after_s,
                   "--mig auto: seconds with nothing queued and nothing arriving after which the jobs left are a "
                   "batch's last, and the plan gives the larger slices to those that would end last (negative: "
                   "never)")
      ->capture_default_str();
  command
      ->add_option("--min-interval", r.min_interval_s,
                   "--mig migrate: seconds between two moves on one GPU"
                   " (default: 20 x a move's cost, checkpoint + restart + 2 MIG steps)")
      ->check(CLI::NonNegativeNumber);
}

std::shared_ptr<gpu::NvmlLibrary> open_nvml(const gpu::Inventory& inventory) {
  if (inventory.nvml_status != gpu::NvmlStatus::Available || inventory.gpus.empty()) return nullptr;
  return gpu::NvmlLibrary::try_open(inventory.nvml_library, nullptr, nullptr);
}

MigAuto start_mig_auto(const MigFlags& flags, const std::string& policy, const gpu::Inventory& inventory,
                       std::shared_ptr<gpu::NvmlLibrary> nvml, const std::string& who) {
  const std::string& mode = flags.mode;
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
  exec::RebalanceOptions rebalance = flags.rebalance;
  rebalance.migrate = mode == "migrate";
  rebalance.shrink = sched::parse_policy_spec(policy).dynamic_batch;
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
  scheduler.set_slots(std::move(*changed), partitioner->awaiting(), partitioner->waiting());
  return true;
}

std::vector<sched::Slot> host_slots(const gpu::Inventory& inventory, const MigAuto& mig) {
  return mig.partitioner ? exec::device_slots(inventory.gpus) : machine_slots(inventory);
}

exec::ProcessExecutorOptions executor_options(std::shared_ptr<gpu::NvmlLibrary> nvml,
                                              const std::vector<sched::Slot>& slots) {
  exec::ProcessExecutorOptions options;
  options.ragmig_exe = ragmig_exe();
  options.shim_exe = exec::find_shim(options.ragmig_exe);
  const auto cpu_slots =
      std::count_if(slots.begin(), slots.end(), [](const sched::Slot& s) { return s.kind == sched::SlotKind::Cpu; });
  if (cpu_slots > 0) options.cpu_slot_threads = cpu_slot_threads(static_cast<int>(cpu_slots));
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

void add_monitoring_options(CLI::App* command, MonitoringArgs& args, bool alerts_file_option) {
  command
      ->add_option("--metrics-port", args.metrics_port,
                   "serve Prometheus metrics on this port (0: any free port; `ragmig status` says which)")
      ->check(CLI::Range(0, 65535));
  command->add_option("--metrics-host", args.metrics_host, "address /metrics listens on")->capture_default_str();
  if (alerts_file_option)
    command->add_option("--alerts", args.alerts_file, "a TOML file whose [alerts] table sets thresholds and exec")
        ->check(CLI::ExistingFile);
}

monitor::SlotProbe nvml_slot_probe(std::shared_ptr<gpu::NvmlLibrary> nvml, const gpu::Inventory& inventory) {
  // What the inventory knew when the scheduler started; a MIG instance made since is looked up once more.
  auto gpus = std::make_shared<std::vector<gpu::GpuDeviceState>>(inventory.gpus);
  return [nvml, gpus](const sched::Slot& slot) {
    monitor::SlotHardware h;
    if (slot.kind == sched::SlotKind::Cpu) return h;
    h.gpu = std::to_string(slot.group);
    const auto find_instance = [&]() -> std::pair<const gpu::GpuDeviceState*, const gpu::GpuInstanceState*> {
      for (const auto& g : *gpus) {
        if (g.index != slot.group) continue;
        if (slot.kind == sched::SlotKind::Gpu) return {&g, nullptr};
        for (const auto& gi : g.instances)
          for (const auto& d : gi.devices)
            if ("MIG-" + d.uuid == slot.device || d.uuid == slot.device) return {&g, &gi};
        return {&g, nullptr};
      }
      return {nullptr, nullptr};
    };
    auto [device, instance] = find_instance();
    if (nvml && slot.kind == sched::SlotKind::Mig && !instance) {
      try {
        const auto fresh = gpu::read_device(*nvml, slot.group);
        for (auto& g : *gpus)
          if (g.index == slot.group) g = fresh;
        std::tie(device, instance) = find_instance();
      } catch (const Error&) {  // labels from the slot alone
      }
    }
    if (device) h.uuid = device->uuid;
    if (slot.kind == sched::SlotKind::Mig) {
      h.gpu_instance_profile = slot.profile;
      if (instance) h.gpu_instance_id = std::to_string(instance->gi_id);
    }
    if (nvml && !slot.device.empty()) {
      if (const auto memory = gpu::memory_by_uuid(*nvml, slot.device)) {
        h.memory_used_bytes = memory->first;
        h.memory_total_bytes = memory->second;
      }
    }
    return h;
  };
}

Monitoring start_monitoring(sched::Store& store, sched::Scheduler& scheduler, const MonitoringArgs& args,
                            const monitor::AlertThresholds& thresholds, monitor::SlotProbe probe,
                            const std::string& who) {
  Monitoring m;
  m.monitor = std::make_unique<monitor::Monitor>(store, thresholds, std::move(probe),
                                                 [who](const std::string& line) { log_line(who + ": " + line); });
  m.monitor->restore(scheduler);
  scheduler.set_listener(m.monitor.get());
  if (args.metrics_port >= 0) {
    monitor::Monitor* raw = m.monitor.get();
    m.server = std::make_unique<monitor::MetricsServer>(
        args.metrics_host, args.metrics_port, [raw] { return raw->render(); }, [raw] { return raw->firing_json(); });
    scheduler.set_metrics_url(m.server->url());
    log_line(fmt::format("{}: metrics on {}", who, m.server->url()));
  }
  return m;
}

void add_backend_options(CLI::App* command, BackendArgs& args) {
  command
      ->add_option("--backend", args.backend,
                   "local: this machine's slots; slurm: each attempt an sbatch job on a Slurm cluster (the slots "
                   "are the GRES and CPUs sinfo lists; SLURM_CONF as the Slurm commands read it)")
      ->capture_default_str()
      ->check(CLI::IsMember({"local", "slurm"}));
  command->add_option("--partition", args.slurm.partition, "slurm: sbatch --partition");
  command->add_option("--account", args.slurm.account, "slurm: sbatch --account");
  command->add_option("--qos", args.slurm.qos, "slurm: sbatch --qos");
  command->add_option("--time", args.slurm.time_limit, "slurm: sbatch --time (a job's time limit, e.g. 4:00:00)");
  command->add_option("--sbatch", args.slurm.sbatch_options,
                      "slurm: one more sbatch option, as one word (--sbatch=--constraint=a100); repeatable");
  command
      ->add_option("--array-limit", args.slurm.array_limit,
                   "slurm: attempts started together (a sweep's trials) go as one job array; at most this many of "
                   "its tasks run at once (--array=0-N%K; 0: no cap)")
      ->check(CLI::NonNegativeNumber);
}

Backend slurm_backend(const BackendArgs& args, int cpu_slots, const std::string& mig) {
  if (mig != "off")
    throw ConfigError("--mig " + mig +
                      " re-partitions this machine's GPUs; with --backend slurm the MIG layout is "
                      "the cluster's (gres.conf), so leave --mig off");
  exec::check_slurm_options(args.slurm);
  exec::SlurmOptions options = args.slurm;
  options.ragmig_exe = ragmig_exe();
  options.shim_exe = exec::find_shim(options.ragmig_exe);
  Backend backend;
  backend.slots = exec::read_slurm_slots(options, cpu_slots);
  backend.executor = std::make_unique<exec::SlurmExecutor>(std::move(options));
  return backend;
}

Host open_host(const BackendArgs& backend, int cpu_slots, const MigFlags& mig, const std::string& policy,
               const std::string& who) {
  Host host;
  if (backend.backend == "slurm") {
    host.slurm = true;
    host.backend = slurm_backend(backend, cpu_slots, mig.mode);
    return host;
  }
  gpu::InventoryOptions inventory_options;
  inventory_options.cpu_slots = cpu_slots;
  host.inventory = gpu::read_inventory(inventory_options);
  host.nvml = open_nvml(host.inventory);
  host.mig = start_mig_auto(mig, policy, host.inventory, host.nvml, who);
  host.backend.slots = host_slots(host.inventory, host.mig);
  host.backend.executor = std::make_unique<exec::ProcessExecutor>(executor_options(host.nvml, host.backend.slots));
  return host;
}

std::string describe_slots(const std::vector<sched::Slot>& slots) {
  std::string where;
  for (const auto& s : slots) where += (where.empty() ? "" : ", ") + s.id + " (" + s.profile + ")";
  return where;
}

}  // namespace ragmig::apps
