// One simulated run: the workload's jobs are submitted to the real sched::Scheduler (with its policy, its
// placement and an in-memory sched::Store) as the SimClock reaches their arrival, and the loop is stepped at
// every event — an arrival, an attempt's end, the end of a MIG re-partition, and every tick while jobs wait.
// `mig=auto` GPUs are laid out by exec::plan_rebalance from each job's speed per slice size, which the
// throughput model gives (slice_speeds).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "exec/mig_rebalance.h"
#include "sim/cluster.h"
#include "sim/metrics.h"
#include "sim/sim_executor.h"
#include "sim/workload.h"

namespace ragmig::sim {

/// Where a simulation is (SimOptions::on_progress).
struct SimProgress {
  double simulated_s = 0;  ///< since the first arrival
  size_t arrived = 0;      ///< jobs submitted so far
  size_t jobs = 0;         ///< of this many (the placeable ones)
  size_t queued = 0;
  size_t running = 0;  ///< attempts running or stopping
  size_t steps = 0;    ///< scheduler passes so far
};

struct SimOptions {
  std::string policy = "fifo";  ///< a sched policy spec: "las(thresholds=3600:36000,min_run=60)"
  /// While jobs wait, the loop also runs every tick_s (as `ragmig run` does every --tick): policies whose
  /// decisions change with time alone (min_run, aging, quanta, LAS thresholds) act within a tick.
  double tick_s = 60;
  SimCosts costs;
  /// mig=auto GPUs may checkpoint running jobs to move them to a better layout (exec/mig_rebalance.h).
  bool migrate = false;
  double gain_factor = 2;       ///< a move must win back this many times its cost
  double min_interval_s = -1;   ///< between two moves on one GPU; negative: exec::min_interval's default
  double efficiency_weight = exec::RebalanceOptions{}.efficiency_weight;  ///< the plan's alpha (mig_rebalance.h)
  double drain_after_s = exec::RebalanceOptions{}.drain_after_s;  ///< a batch's end (mig_rebalance.h); < 0: never
  bool keep_timeline = false;
  /// "" keeps the jobs in memory (MemoryJobs); a folder: in the SQLite store `ragmig run` keeps there (a fresh one),
  /// the same decisions more slowly: bench_sim's reference for the in-memory table.
  std::string sqlite_state_dir;
  /// Told where the simulation is every `progress_every` passes (a whole trace on a crowded cluster takes
  /// minutes): `ragmig sim` prints a line from it now and then. Null: not told.
  std::function<void(const SimProgress&)> on_progress;
  size_t progress_every = 256;
};

struct SimResult {
  std::string policy;
  Metrics metrics;
  int64_t preemptions = 0;
  int64_t repartitions = 0;     ///< GPUs re-partitioned (each counted once per re-partition)
  int64_t migrations = 0;       ///< running jobs moved to another instance (also counted in preemptions)
  size_t unplaceable = 0;       ///< jobs no slot of this cluster can ever hold: left out
  size_t steps = 0;             ///< scheduler passes
  double wall_s = 0;            ///< how long the simulation took
  std::vector<Occupancy> timeline;
};

/// Whether some set of slots of `cluster` (in any layout the planner may choose for `mig=auto` GPUs) could
/// hold every replica of `need`.
bool placeable(const sched::Need& need, const Cluster& cluster);

/// Simulates `jobs` (sorted by arrival) on `cluster` under one policy. Throws ConfigError for a bad policy.
SimResult simulate(const std::vector<SimJob>& jobs, const Cluster& cluster, const ThroughputModel& model,
                   const SimOptions& options);

/// A job type's speed on each slice size relative to the whole GPU, from the throughput model.
exec::SliceSpeeds slice_speeds(const ThroughputModel& model, const std::string& type);

/// Splits "fifo,las(thresholds=60:600,min_run=0),srtf" on the commas outside parentheses.
std::vector<std::string> split_policy_list(const std::string& text);

}  // namespace ragmig::sim
