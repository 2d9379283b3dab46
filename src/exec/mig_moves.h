// Changes under way on mig=auto GPUs. A change from exec::plan_rebalance goes through three phases: its
// moved jobs checkpoint and stop (draining), its MIG steps run, its new instances are offered — the one made
// for a moved or queued job held for it (Slot::reserved_for) until it starts there. While a GPU changes, an
// instance the change destroys is offered to nobody (Slot::kVacating) and is kept only while a job still holds
// it.
// Bookkeeping only: the simulator's mig=auto GPUs and `ragmig run --mig auto` carry the steps out.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "exec/mig_rebalance.h"
#include "gpu/layout.h"
#include "sched/policy.h"

namespace ragmig::exec {

class MigMoves {
 public:
  /// A change starts at `now`: draining while it has moved jobs (Scheduler::migrate them), else ready for
  /// its steps. A GPU with moved jobs starts its cool-down (last_move_at).
  void begin(GpuChange change, double now);
  bool changing(int gpu) const { return pending_.count(gpu) > 0; }
  /// The change under way on `gpu`, or null.
  const GpuChange* change(int gpu) const;
  /// After a scheduler pass: drops the reservations of jobs that started (running, not stopping) or left
  /// the view, and returns the GPUs whose moved jobs have all stopped since their change was planned (no
  /// attempt that ran then still runs; a moved job may already run on its new instance): their steps may
  /// run now. Each GPU is returned once.
  std::vector<int> settle(const sched::ClusterView& view);
  /// Whether `gpu`'s change waits for its moved jobs to stop.
  bool draining(int gpu) const;
  /// `gpu`'s change is done: its layout is the target now.
  void finish(int gpu);
  /// Whom the instance `p` of `gpu` is held for: a moved or planned job, Slot::kVacating (a change under way
  /// destroys it), or 0.
  sched::JobId holder(int gpu, const gpu::Placement& p) const;
  /// Jobs whose instance a change under way is making (`exists` says it is not there yet):
  /// ClusterView::awaiting.
  std::vector<sched::JobId> awaiting(const std::function<bool(int gpu, const gpu::Placement&)>& exists) const;
  /// When `gpu` last moved a running job (-1e300: never).
  double last_move_at(int gpu) const;
  /// Whether anything is under way or held.
  bool idle() const { return pending_.empty() && reserved_.empty(); }
  /// Jobs holding an instance (not started there yet).
  size_t reservations() const { return reserved_.size(); }

 private:
  struct Pending {
    GpuChange change;
    double planned_at = 0;
    bool draining = false;
  };
  std::map<int, Pending> pending_;
  std::map<sched::JobId, std::pair<int, gpu::Placement>> reserved_;  ///< job -> (GPU, its instance)
  std::map<int, double> last_move_;
};

}  // namespace ragmig::exec
