// Packing a set of jobs onto one MIG GPU by throughput: given how fast each job runs on each profile, the
// layout and the instance per job that maximise the summed speed, every job placed. Pure; the rebalancer
// (exec/mig_rebalance.h) asks it whether a GPU does more work with a job added, moved or taken away.
#pragma once

#include <optional>
#include <vector>

#include "gpu/layout.h"

namespace ragmig::gpu {

/// speed[j][p]: job j's throughput on an instance of profile p (index into GpuCatalog::profiles) relative to
/// the whole GPU; 0 where the job cannot run there (too little memory).
using SpeedTable = std::vector<std::vector<double>>;

struct Packing {
  std::vector<Placement> instance_of;  ///< per job
  double throughput = 0;               ///< the summed speed
};

/// The best packing of every job of `speed` onto `gpu` beside the instances of `fixed` (which stay, busy):
/// the largest summed speed over every valid layout (no media-extension profiles) and one instance per job;
/// ties go to the packing that leaves more jobs on `current[j]` (a job's instance now, when given and
/// non-empty) so that nothing moves for nothing, then to the one whose instances take fewest memory slices,
/// then to the first layout in canonical order. Nullopt when
/// the jobs cannot all be placed. Exhaustive: a GPU has at most 7 instances.
std::optional<Packing> best_packing(const GpuCatalog& gpu, const SpeedTable& speed, const Layout& fixed,
                                    const std::vector<std::optional<Placement>>& current = {});

}  // namespace ragmig::gpu
