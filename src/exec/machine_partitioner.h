// `ragmig run --mig auto|migrate`: re-partitions this machine's MIG GPUs for what waits in the queue. After a
// scheduler pass it asks exec::plan_rebalance (the decision the simulator's mig=auto GPUs take), with the
// instances that running jobs hold (and those where NVML sees processes) as busy; with `migrate`, running
// jobs may move: exec::MigMoves holds the change until they have checkpointed and exited, and the instance
// made for each until it resumes there. A changed layout is applied through NVML (gpu::apply_plan: every check
// before the first change, idle instances only, largest first, IN_USE retried) on a thread of its own, so the
// scheduler's passes go on while the steps run (a real GPU takes seconds per step); the instances a change
// destroys are offered to nobody meanwhile, and the machine's new slots go to Scheduler::set_slots at the
// first pass after the steps are done. Only GPUs whose MIG mode is on and whose model the catalog knows are
// touched; MIG mode itself is never changed here. While a job waits for a GPU, the devices are read again
// every `reread_s` of the scheduler's clock, so an instance freed or made outside ragmig is seen.
#pragma once

#include <functional>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "exec/mig_moves.h"
#include "exec/mig_rebalance.h"
#include "exec/queue_partition.h"
#include "gpu/mig_applier.h"
#include "gpu/nvml_device.h"
#include "sched/slot.h"

namespace ragmig::exec {

/// The scheduler's slots of these devices (MIG instances, whole GPUs with MIG off).
std::vector<sched::Slot> device_slots(const std::vector<gpu::GpuDeviceState>& devices);

/// The GPUs of `devices` that may be re-partitioned, with their instances' slot ids. An instance counts as
/// busy when NVML sees processes on it or cannot say, or when it has other than one compute instance
/// (a layout someone made by hand). GPUs left out are named in `notes` when it is given.
std::vector<PlannableGpu> plannable_gpus(const std::vector<gpu::GpuDeviceState>& devices,
                                         std::vector<std::string>* notes);

/// The speed exponent assumed of jobs nobody measured: MISO's A100 table's median (a 1g slice runs a typical
/// job 4.1x slower than the whole GPU, not 7x).
constexpr double kUnmeasuredExponent = 0.73;

/// `change` to GPU `g` as a plan gpu::apply_plan carries out: instances whose slot is in `held` (running
/// jobs', see busy_slots) are busy.
gpu::GpuPlan gpu_plan(const PlannableGpu& g, const GpuChange& change, const std::set<std::string>& held);

/// plan_rebalance's changes for `gpus` (no moves) as such plans: what `--mig auto` does with a queue when no
/// job moves. Only GPUs with steps to take.
std::vector<gpu::GpuPlan> rebalance_plans(const sched::ClusterView& view, const std::vector<PlannableGpu>& gpus,
                                          const SpeedOf& speed_of, const std::vector<sched::JobId>& queue_order = {});

class MachinePartitioner {
 public:
  using Log = std::function<void(const std::string&)>;
  /// `nvml` must outlive the partitioner. `devices` are the GPUs as the caller read them, the ones whose
  /// slots the scheduler starts with.
  /// `speed_of`: each job's speed per slice size (default: power_law_speeds(kUnmeasuredExponent)).
  /// `rebalance.migrate`: running jobs may be checkpointed and moved (take_stops() says which).
  MachinePartitioner(const gpu::NvmlLibrary& nvml, std::vector<gpu::GpuDeviceState> devices, gpu::ApplyOptions options,
                     Log log, double reread_s = 10.0, SpeedOf speed_of = nullptr, RebalanceOptions rebalance = {});
  /// Waits for steps under way to end, and logs what they said.
  ~MachinePartitioner();
  MachinePartitioner(const MachinePartitioner&) = delete;
  MachinePartitioner& operator=(const MachinePartitioner&) = delete;

  /// Call after each scheduler pass. Returns the slots to offer when they differ from the view's (a layout
  /// changed, or a slot kept for a running job is free to go), else nullopt. Device errors are logged, not
  /// thrown: the layout stays as it is, and the same question is not asked again until the queue or the
  /// machine changes (the machine is read again every `reread_s` while a job waits).
  /// `queue_order`: the scheduler policy's order of the queued jobs (sched::Policy::queue_order).
  std::optional<std::vector<sched::Slot>> after_pass(const sched::ClusterView& view,
                                                     const std::vector<sched::JobId>& queue_order = {});
  /// Running jobs to checkpoint and stop now so that they can move (Scheduler::migrate); asked once.
  std::vector<sched::JobId> take_stops() { return std::exchange(stops_, {}); }
  /// Jobs waiting for the instance being made for them (ClusterView::awaiting), for Scheduler::set_slots.
  std::vector<sched::JobId> awaiting() const;
  /// Queued jobs the last plan left waiting (ClusterView::plan_waiting), for Scheduler::set_slots.
  const std::vector<sched::JobId>& waiting() const { return waiting_; }
  /// Whether MIG steps are being carried out now (on the partitioner's thread). Destroying the partitioner
  /// waits for them to end.
  bool applying() const { return in_flight_.has_value(); }

 private:
  /// What the steps' thread hands back: the devices as read after the steps, and its log lines.
  struct Applied {
    std::vector<gpu::GpuDeviceState> devices;
    bool read = false;
    std::vector<std::string> log;
  };
  struct InFlight {
    std::vector<int> gpus;
    std::future<Applied> done;
  };
  /// Plans for the queue on the devices as just read: changes without moves are applied at once, those
  /// with moves wait for their jobs to stop.
  void repartition(const sched::ClusterView& view, const std::vector<sched::JobId>& queue_order);
  /// Starts the steps of the ready_ changes (their moved jobs have stopped) on a thread of their own.
  void launch(const sched::ClusterView& view);
  /// Takes the outcome of steps that have ended: the devices read back, the changes finished. True if any.
  bool land();
  std::string question(const sched::ClusterView& view) const;
  /// Reads the devices; false (logged once per message) when NVML cannot.
  bool read(double now);
  std::optional<std::vector<sched::Slot>> slots_if_changed(const sched::ClusterView& view);

  const gpu::NvmlLibrary& nvml_;
  gpu::ApplyOptions options_;
  Log log_;
  double reread_s_;
  SpeedOf speed_of_;
  RebalanceOptions rebalance_;
  MigMoves moves_;
  std::vector<sched::JobId> stops_;
  std::vector<int> ready_;               ///< GPUs whose change may run its steps, waiting for the thread
  std::optional<InFlight> in_flight_;    ///< steps under way
  std::vector<gpu::GpuDeviceState> devices_;  ///< as last read
  double read_at_ = 0;                        ///< when, on the scheduler's clock (0: by the caller)
  std::string read_error_;                    ///< the last read's error, logged once
  std::string last_question_;
  std::vector<sched::JobId> waiting_;  ///< sorted
  std::vector<std::string> said_;  ///< notes already logged
  std::vector<std::string> kept_;  ///< slots gone from NVML that running jobs still hold
};

}  // namespace ragmig::exec
