// What a MIG re-partition for the queue starts from: a MIG instance as a scheduler slot, the smallest
// profile a need fits, the GPUs that may be re-partitioned (PlannableGpu) and the question text that tells
// when the queue or the busy instances changed (so a caller plans once per question). The plan itself is
// exec::plan_rebalance's.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "gpu/mig_catalog.h"
#include "gpu/planner.h"  // GpuState
#include "sched/policy.h"
#include "sched/slot.h"

namespace ragmig::exec {

/// A MIG instance of `profile` as a scheduler slot: kind, compute slices, speed slices / 7, and the memory
/// its name gives (1g.18gb: 18 x 1024 MiB, what a job asking for "1g.18gb" reads). Id, device and group are
/// the caller's.
sched::Slot mig_slot(const gpu::MigProfile& profile);

/// The smallest profile of `catalog` (no media extensions; fewest compute slices, then least memory) whose
/// slot the scheduler would let one replica of `need` use (sched::fits); "" when none can.
std::string smallest_profile(const gpu::GpuCatalog& catalog, const sched::Need& need);

/// A GPU the planner may re-partition: its state (instances with their placements; `busy` already set
/// where something outside the scheduler runs) and, per instance, the id of its scheduler slot ("" when it
/// has none), by which the view's running jobs make it busy.
struct PlannableGpu {
  gpu::GpuState state;
  std::vector<std::string> slot_ids;
};

/// The slot ids the view's running jobs hold.
std::set<std::string> busy_slots(const sched::ClusterView& view);
/// `g`'s state with an instance busy also where its slot id is in `busy`.
gpu::GpuState with_busy(const PlannableGpu& g, const std::set<std::string>& busy);

/// The question a re-partition for the queue answers, as text: equal texts get equal plans, so a caller
/// asks once per text. "" when the view queues no GPU job (nothing to plan for).
std::string queue_question(const sched::ClusterView& view, const std::vector<PlannableGpu>& gpus);

}  // namespace ragmig::exec
