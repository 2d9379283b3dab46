// Re-partitioning MIG GPUs at run time from what waits in the queue: the gpu planner (plan_partitions)
// chooses each `mig=auto` GPU's layout for the queued jobs around its busy instances; while a GPU is being
// re-partitioned the instances it destroys or creates are offered to nobody. It decides only *what* and
// *when*; the caller applies the steps (the simulator charges SimCosts::mig_step_s per step) and hands
// slots() to Scheduler::set_slots. The question itself is exec::plan_for_queue, which `ragmig run --mig
// auto` asks on a real machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/demand.h"
#include "gpu/layout.h"
#include "sched/policy.h"
#include "sim/cluster.h"

namespace ragmig::sim {

class MigPartitioner {
 public:
  explicit MigPartitioner(Cluster cluster);

  /// The slots to offer now: every GPU in its current layout, less the instances a re-partition under way
  /// destroys or creates; CPU slots last.
  std::vector<sched::Slot> slots() const;

  /// One GPU to re-partition, and how many destroy/create steps it takes.
  struct Change {
    int gpu = 0;
    gpu::Layout target;
    size_t steps = 0;
  };
  /// Plans the `mig=auto` GPUs that are not being re-partitioned for the queued jobs of `view` (taken after
  /// the scheduler's pass, so they are jobs no free slot could take). Returns the GPUs whose best layout
  /// differs from the current one; empty when nothing would change, or when nothing changed since the last
  /// call (the planner is not asked twice the same question).
  std::vector<Change> plan(const sched::ClusterView& view);
  /// The GPU starts its re-partition: the instances it loses leave slots().
  void begin(const Change& change);
  /// The re-partition is done: the target layout's instances join slots().
  void finish(int gpu);
  bool repartitioning(int gpu) const { return pending_[static_cast<size_t>(gpu)].has_value(); }
  const Cluster& cluster() const { return cluster_; }

 private:
  Cluster cluster_;                                  ///< gpus[i].layout is GPU i's current layout
  std::vector<std::optional<gpu::Layout>> pending_;  ///< the target while GPU i is being re-partitioned
  std::string last_question_;
};

}  // namespace ragmig::sim
