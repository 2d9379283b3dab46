// What `ragmig run` and `ragmig batch` share to host a scheduler on this machine: the state folder's lock
// (one scheduler per folder), the slots the machine offers, and `--mig auto` (MIG GPUs re-partitioned for
// the queue between the scheduler's passes).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/file_lock.h"
#include "exec/machine_partitioner.h"
#include "exec/process_executor.h"
#include "exec/slurm_executor.h"
#include "gpu/inventory.h"
#include "monitor/metrics_server.h"
#include "monitor/monitor.h"
#include "sched/scheduler.h"
#include "sched/slot.h"
#include "sched/store.h"

namespace ragmig::apps {

/// Takes <state>/scheduler.lock; ConfigError naming the running scheduler's pid when another holds it.
FileLock take_scheduler_lock(sched::Store& store, const std::string& state_dir);

/// The scheduler's slots from the inventory; DeviceError saying why when there are none.
std::vector<sched::Slot> machine_slots(const gpu::Inventory& inventory);

/// `--mig off|auto|migrate` and what the re-partitioner weighs a move by (exec::RebalanceOptions; the same
/// option names and defaults as `ragmig sim`'s, so that a simulation and a real run take the same decisions).
struct MigFlags {
  std::string mode = "off";
  exec::RebalanceOptions rebalance;
};
void add_mig_options(CLI::App* command, MigFlags& mig);

/// NVML kept open for the scheduler's lifetime (the partitioner, the executor's utilisation): null where
/// the inventory found no usable NVML or no GPU.
std::shared_ptr<gpu::NvmlLibrary> open_nvml(const gpu::Inventory& inventory);

/// `--mig auto`'s partitioner with the NVML library it uses; empty for `--mig off`.
struct MigAuto {
  std::shared_ptr<gpu::NvmlLibrary> nvml;
  std::unique_ptr<exec::MachinePartitioner> partitioner;
  std::string who;  ///< "ragmig run", for the log

  /// After a scheduler pass: re-partitions if the queue asks for it and hands the new slots to the
  /// scheduler. True when the slots changed.
  bool after_pass(sched::Scheduler& scheduler);
};

/// For mode "auto" or "migrate": NVML (`nvml`, from open_nvml) and at least one GPU the partitioner may change (MIG on,
/// in the catalog), else ConfigError saying why. For "off": nothing. `policy`: the scheduler's; with "+dynbatch" the
/// plan may lay out instances that hold a resizable job only at a smaller batch (RebalanceOptions::shrink).
MigAuto start_mig_auto(const MigFlags& flags, const std::string& policy, const gpu::Inventory& inventory,
                       std::shared_ptr<gpu::NvmlLibrary> nvml, const std::string& who);

/// The slots to start with: machine_slots, except that with --mig auto a MIG GPU may have no instance yet
/// (the partitioner makes them) and no CPU slots stand in for it.
std::vector<sched::Slot> host_slots(const gpu::Inventory& inventory, const MigAuto& mig);

/// The process executor's options on this machine: this ragmig, its shim, and, with `nvml` (from
/// open_nvml), the GPUs' utilisation as the measure of jobs on GPU and MIG slots (the mean over a job's
/// devices; unknown when the driver does not say, as most do not for MIG devices); jobs on CPU slots get
/// their share of the cores among `slots`' CPU slots.
exec::ProcessExecutorOptions executor_options(std::shared_ptr<gpu::NvmlLibrary> nvml,
                                              const std::vector<sched::Slot>& slots);

/// `--backend local|slurm` and the Slurm options (`--partition`, `--account`, `--qos`, `--time`, `--sbatch`).
struct BackendArgs {
  std::string backend = "local";
  exec::SlurmOptions slurm;
};
void add_backend_options(CLI::App* command, BackendArgs& args);

/// Where a hosted scheduler's jobs run: this machine's processes, or Slurm's jobs (with the slots sinfo
/// offers).
struct Backend {
  std::vector<sched::Slot> slots;
  std::unique_ptr<sched::Executor> executor;
};
/// The Slurm backend: slots from sinfo (`cpu_slots` per node, 0: where there are no GPUs, one per CPU), the
/// executor submitting each attempt with sbatch. ConfigError for --mig auto|migrate (Slurm's gres.conf holds
/// the layout), DeviceError when Slurm does not answer.
Backend slurm_backend(const BackendArgs& args, int cpu_slots, const std::string& mig);

/// What a hosted scheduler runs on: this machine (its inventory, NVML, `--mig auto`'s partitioner, processes on
/// its slots) or, with `--backend slurm`, Slurm's nodes (no inventory or NVML here: they are not this machine's).
struct Host {
  bool slurm = false;
  gpu::Inventory inventory;
  std::shared_ptr<gpu::NvmlLibrary> nvml;
  MigAuto mig;
  Backend backend;
};
/// `cpu_slots` 0: gpu::InventoryOptions decides (Slurm: slurm_backend's rule); `policy` as for start_mig_auto;
/// `who` ("ragmig run") for the log. ConfigError / DeviceError as start_mig_auto, machine_slots, slurm_backend.
Host open_host(const BackendArgs& backend, int cpu_slots, const MigFlags& mig, const std::string& policy,
               const std::string& who);

/// `--metrics-port`, `--metrics-host` (and, for run, `--alerts FILE`) on a command.
struct MonitoringArgs {
  int metrics_port = -1;  ///< -1: no /metrics; 0: any free port
  std::string metrics_host = "127.0.0.1";
  std::string alerts_file;
};
void add_monitoring_options(CLI::App* command, MonitoringArgs& args, bool alerts_file_option);

/// NVML's view of a slot for the monitor: DCGM's join labels (GPU index and UUID, GPU-instance id and
/// profile) and memory. Null `nvml`: labels from the slot alone, no memory.
monitor::SlotProbe nvml_slot_probe(std::shared_ptr<gpu::NvmlLibrary> nvml, const gpu::Inventory& inventory);

/// The monitor of a hosted scheduler and, with a metrics port, its /metrics server.
struct Monitoring {
  std::unique_ptr<monitor::Monitor> monitor;
  std::unique_ptr<monitor::MetricsServer> server;

  /// After a pass: samples, raises and clears alerts.
  void after_pass(sched::Scheduler& scheduler, double now) { monitor->after_pass(scheduler, now); }
};

/// Starts monitoring `scheduler` (after its recover()): the monitor listens to it, and /metrics listens where
/// `args` say (its URL goes to the log and to `ragmig status`). Throws IoError when the port cannot be had.
Monitoring start_monitoring(sched::Store& store, sched::Scheduler& scheduler, const MonitoringArgs& args,
                            const monitor::AlertThresholds& thresholds, monitor::SlotProbe probe,
                            const std::string& who);

/// "cpu:0 (cpu), cpu:1 (cpu)"
std::string describe_slots(const std::vector<sched::Slot>& slots);

}  // namespace ragmig::apps
