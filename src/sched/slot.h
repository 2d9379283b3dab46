// Where jobs run: a slot is a MIG instance, a whole GPU or a CPU slot, with its size and relative speed.
// The gpu module discovers them (exec/inventory_slots.h); sched only needs these numbers to place jobs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/job.h"

namespace ragmig::sched {

struct Slot {
  std::string id;          ///< stable name: "cpu0", "gpu0", "gpu0/gi3" ...
  SlotKind kind = SlotKind::Cpu;
  std::string profile = "cpu";  ///< "cpu", a MIG profile ("1g.18gb") or the GPU's name
  int compute = 1;         ///< compute slices: a whole GPU has 7, a MIG instance its profile's; a CPU slot 1
  int64_t memory_mb = 0;
  /// The memory its MIG profile names ("1g.18gb": 18 x 1024), which is what a profile need asks for; NVML
  /// reports less (a 1g.18gb has under 18 GiB), so needs compare against this when set (> 0).
  int64_t nominal_memory_mb = 0;
  double speed = 1.0;      ///< relative throughput; work of estimate_s takes estimate_s / speed seconds
  std::string device;      ///< CUDA_VISIBLE_DEVICES for a worker here: "MIG-<uuid>", "0", "" for CPU
  int group = 0;           ///< the GPU (or host) it belongs to: gang placement prefers one group
  /// A slot made for one job (a MIG instance a re-partition created for it): only that job starts on it.
  /// kVacating: a slot about to be destroyed, kept only while its job stops: nobody starts on it.
  JobId reserved_for = 0;
  static constexpr JobId kVacating = -1;
  /// A MIG instance of a GPU whose layout ragmig re-plans for the queue (--mig auto): placement tries such
  /// slots after the others, largest first (see placement_order), and jobs the plan left waiting take none
  /// (ClusterView::plan_waiting).
  bool reshapable = false;
};

std::string to_string(SlotKind kind);

/// Whether one replica of `need` may run on `slot`: CPU needs on CPU slots; GPU needs on a whole GPU or a
/// MIG instance with at least the compute slices and memory asked for.
bool fits(const Need& need, const Slot& slot);

/// Why `need` can never run on `slots` (fewer of them fit it than it has replicas), naming what there is; ""
/// when it can. Slots being destroyed (kVacating) do not count.
std::string unrunnable_reason(const Need& need, const std::vector<Slot>& slots);

}  // namespace ragmig::sched
