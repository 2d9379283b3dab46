// The MIG layout the queue asks for: the scheduler's view (queued jobs' needs and priorities, the slots
// running jobs hold) turned into the partition planner's demands and busy instances, and its answer. Pure:
// the simulator's mig=auto GPUs and `ragmig run --mig auto` on a real machine ask this one function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/demand.h"
#include "gpu/mig_catalog.h"
#include "gpu/planner.h"
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

/// What one replica of `need` asks of the planner on `catalog` (count 1, priority 0): a memory need
/// ("20gb") stays a memory need, so the planner may give it any instance that large and prefers the most
/// compute; a need for a whole GPU or a profile becomes that exact profile (the smallest that fits when the
/// catalog has no profile of that name). Nullopt when no instance of this GPU can hold it.
std::optional<gpu::Demand> demand_for(const gpu::GpuCatalog& catalog, const sched::Need& need);

/// A GPU the planner may re-partition: its state (instances with their placements; `busy` already set
/// where something outside the scheduler runs) and, per instance, the id of its scheduler slot ("" when it
/// has none), by which the view's running jobs make it busy.
struct PlannableGpu {
  gpu::GpuState state;
  std::vector<std::string> slot_ids;
};

/// The question plan_for_queue answers, as text: equal texts get equal plans, so a caller asks once per
/// text. "" when the view queues no GPU job (nothing to plan for).
std::string queue_question(const sched::ClusterView& view, const std::vector<PlannableGpu>& gpus);

/// Plans `gpus` for the view's queued GPU jobs: instances that running jobs hold are busy and kept, each
/// model's GPUs are planned together for the demands its profiles can hold (priority levels from the
/// jobs' priorities). Returns the plans of the GPUs whose layout changes.
std::vector<gpu::GpuPlan> plan_for_queue(const sched::ClusterView& view, const std::vector<PlannableGpu>& gpus);

}  // namespace ragmig::exec
