// The MIG partition planner, a pure function: given each GPU's current layout (with its busy instances)
// and the pending jobs' demands, it picks a target layout per GPU that runs the most jobs now (by
// priority), then gives them the most compute, then leaves the least fragmented free space, then needs the
// fewest destroy/create steps. Demands that cannot be placed are returned as unplaced, never dropped.
#pragma once

#include <string>
#include <vector>

#include "gpu/demand.h"
#include "gpu/layout.h"
#include "gpu/mig_steps.h"

namespace ragmig::gpu {

/// One GPU as the planner sees it.
struct GpuState {
  int index = 0;                         ///< NVML index (nvidia-smi -i)
  const GpuCatalog* catalog = nullptr;   ///< its MIG profiles
  std::string device_name;               ///< "NVIDIA H200", informational
  std::string uuid;                      ///< "GPU-…", informational; the applier checks it when set
  bool mig_enabled = true;               ///< GPUs with MIG off are planned only with allow_enable_mig
  std::vector<CurrentInstance> instances;
};

struct PlanOptions {
  bool allow_enable_mig = false;  ///< plan for GPUs whose MIG mode is off (their plan starts with enable_mig)
};

/// One job of demand `demand` (index into PartitionPlan::demands) runs on the instance at `placement`.
struct Assignment {
  int demand = 0;
  Placement placement;
  bool operator==(const Assignment&) const = default;
};

struct GpuPlan {
  int index = 0;
  const GpuCatalog* catalog = nullptr;
  std::string device_name;
  std::string uuid;
  bool mig_enabled = true;
  std::vector<CurrentInstance> current;
  Layout target;                        ///< canonical order
  std::vector<MigStep> steps;           ///< from current to target
  std::vector<Assignment> assignments;  ///< which new jobs go where
  int throughput = 0;                   ///< compute slices given to the new jobs
  int fragmentation = 0;                ///< free compute slices that no single new instance could use
};

/// `count` jobs of demand `demand` that found no instance, and why.
struct Unplaced {
  int demand = 0;
  int count = 0;
  std::string reason;
};

struct PartitionPlan {
  std::vector<Demand> demands;
  std::vector<GpuPlan> gpus;
  std::vector<Unplaced> unplaced;
  std::vector<std::string> notes;  ///< GPUs left out and why
  bool complete() const { return unplaced.empty(); }
};

/// Plans every GPU in `gpus`, one after the other, each for the jobs the GPUs before it did not take.
/// Per GPU the search is exhaustive over every valid layout that keeps its busy instances; jobs are matched
/// to instances exactly (best_assignment). Throws ConfigError for inputs no plan can respect (an invalid
/// current layout, more than 18 distinct priorities).
PartitionPlan plan_partitions(const std::vector<GpuState>& gpus, const std::vector<Demand>& demands,
                              const PlanOptions& options = {});

/// Free compute slices of `layout` minus the largest instance that could still be added: 0 when all free
/// compute can be had as one instance.
int fragmentation(const GpuCatalog& gpu, const Layout& layout);

}  // namespace ragmig::gpu
