// The simulator's `mig=auto` GPUs: their layouts, and the re-partitions the rebalancer
// (exec::plan_rebalance) asks for, carried out in exec::MigMoves' three phases — the running jobs it moves
// are checkpointed and stopped, the GPU's destroy/create steps run (SimCosts::mig_step_s each), its new
// instances are offered (one made for a moved or queued job held for it). While a GPU changes, instances it destroys
// or creates are offered to nobody.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "exec/mig_moves.h"
#include "exec/mig_rebalance.h"
#include "gpu/layout.h"
#include "sched/policy.h"
#include "sim/cluster.h"

namespace ragmig::sim {

class MigPartitioner {
 public:
  MigPartitioner(Cluster cluster, exec::SpeedOf speed_of, exec::RebalanceOptions options);

  /// The slots to offer now: every GPU in its current layout, less the instances a change under way destroys
  /// or creates (but with those that running jobs still hold), reserved where made for a job; CPU slots last.
  std::vector<sched::Slot> slots() const;
  /// Jobs whose reserved instance does not exist yet (ClusterView::awaiting).
  std::vector<sched::JobId> awaiting() const;
  /// Queued jobs the last plan left waiting (ClusterView::plan_waiting).
  const std::vector<sched::JobId>& waiting() const { return waiting_; }

  struct Actions {
    std::vector<sched::JobId> stop;  ///< running jobs to checkpoint and stop (Scheduler::migrate)
    bool slots_changed = false;      ///< slots(), awaiting() or waiting() differ: hand them to Scheduler::set_slots
  };
  /// After a scheduler pass at `now`: drops reservations of jobs that started or left, moves changes under
  /// way along (a GPU whose moved jobs have all stopped starts its steps; finished steps bring the new
  /// instances) and, when the question changed, plans the GPUs that are not changing, shaping layouts for
  /// queued jobs in `queue_order` (the scheduler's policy's).
  Actions update(const sched::ClusterView& view, double now, const std::vector<sched::JobId>& queue_order = {});
  /// When the next re-partition under way ends, or (with migration) a GPU's cool-down after a move ends
  /// (+infinity: none).
  double next_event() const;

  bool changing(int gpu) const { return moves_.changing(gpu); }
  const Cluster& cluster() const { return cluster_; }
  int64_t repartitions() const { return repartitions_; }
  int64_t migrations() const { return migrations_; }
  /// (gpu, start, end) of every re-partition's steps so far.
  const std::vector<std::tuple<int, double, double>>& history() const { return history_; }

 private:
  std::string question(const sched::ClusterView& view, double now) const;
  void begin_steps(int gpu, double now);

  Cluster cluster_;  ///< gpus[i].layout is GPU i's current layout
  exec::SpeedOf speed_of_;
  exec::RebalanceOptions options_;
  exec::MigMoves moves_;
  std::map<int, std::pair<double, double>> steps_;  ///< GPUs whose MIG steps run: (from, until)
  std::vector<std::string> held_;  ///< slot ids running jobs hold, as of the last update
  std::string last_question_;
  std::vector<sched::JobId> waiting_;
  double now_ = 0;  ///< of the last update
  int64_t repartitions_ = 0, migrations_ = 0;
  std::vector<std::tuple<int, double, double>> history_;
};

}  // namespace ragmig::sim
