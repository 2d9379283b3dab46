// Re-laying out `mig=auto` GPUs by throughput, MISO-style: each job's speed per slice size decides whether
// packing pays (small retrievers run several per GPU at a multiple of one's throughput, BERT-sized ones
// barely gain), and — when migration is allowed — running jobs are checkpointed and moved to other
// instances when the time won back outweighs what the move costs (checkpoint, restart, MIG steps), with a
// gain factor and a minimum interval per GPU so that it never thrashes. Pure: the simulator's mig=auto
// GPUs ask it; it decides the layouts and what moves where, the caller stops jobs and re-partitions, and
// the scheduler's policy still decides which queued job starts first.
//
// The plan, from scratch each time:
//  1. each GPU holds its running jobs: pinned to their instances without migration (and always for jobs
//     being stopped, started this very moment, with several replicas, or on instances busy outside the
//     scheduler), free to be re-packed with it; an instance held for a moved job stays;
//  2. queued single-replica GPU jobs, in the ordering policy's order, each join the GPU where the best packing
//     (gpu::best_packing) gains the most summed value — each job's speed weighted by its efficiency
//     (RebalanceOptions::efficiency_weight) — if any gains (a job no GPU gains from waits), unless waiting
//     for the GPU that frees first (of running jobs, or of jobs planned on it in this pass) and running there
//     whole would end it sooner (one such job per GPU; the value it adds counted as its own speed) — with
//     migration, sooner also than taking the slice now and moving to that GPU when it frees. Without
//     migration, a job is not packed where even waiting for the GPU that frees last and running there whole
//     would end it sooner (it would keep its slice to the end), nor where its packing would squeeze a job
//     planned on that GPU earlier in the pass past that point. A job planned on a GPU
//     gets its instance reserved (Slot::reserved_for), so that the ordering policy cannot hand it to a job
//     the plan meant to wait; the jobs left waiting take no reshapable slot meanwhile
//     (ClusterView::plan_waiting) — without both, a sweep submitted at once ran its long trials on the slices
//     made for short ones (bench/sim --mig, part (d): up to 1.33x whole GPUs' average JCT);
//  3. with migration, running jobs move to other GPUs (idle ones, or ones with room) while a move gains more
//     summed value, over the time the job runs there, than gain_factor x its cost — the new GPU's own moves
//     included, and only where that GPU's step 4 will keep it;
//  4. per GPU, a re-pack that moves running jobs is kept only when (value gained) x (time until its next
//     job ends, or a moved job would have ended where it is) exceeds gain_factor x (value lost while the
//     moved jobs checkpoint, restart and the MIG steps run), and the GPU's last move is min_interval_s ago
//     (or no GPU job is queued: then only ends change the jobs, and their neighbours take the freed slices);
//     otherwise running jobs stay put and only queued jobs are packed around them. A GPU that nobody uses
//     or is planned on goes back to one whole instance.
// At a batch's end (nothing queued, nothing arrived for drain_after_s) each job's value also grows with how
// late it would end (RebalanceOptions::lateness_weight). With dynamic batch (RebalanceOptions::shrink) an
// instance holds a resizable job when it holds the job's least batch.
#pragma once

#include <array>
#include <functional>
#include <utility>
#include <vector>

#include "exec/queue_partition.h"
#include "gpu/layout.h"
#include "sched/policy.h"

namespace ragmig::exec {

/// A job's throughput on an instance of g compute slices (index g = 1..7) relative to the whole GPU
/// (speed[7] == 1); index 0 unused.
using SliceSpeeds = std::array<double, 8>;

/// (g / 7)^exponent: what is assumed of a job nobody measured (exponent 1: speed proportional to compute).
SliceSpeeds power_law_speeds(double exponent);

struct RebalanceOptions {
  bool migrate = false;               ///< may checkpoint running jobs to move them
  double checkpoint_s = 10;           ///< from the stop request to the exit
  double restart_s = 20;              ///< before a moved job progresses again
  double mig_step_s = 2;              ///< per destroy or create step
  double gain_factor = 2;             ///< a move must win back this many times what it costs
  /// Between two moves of running jobs on one GPU while GPU jobs are queued; negative: kIntervalMoves x
  /// move_seconds(), so that a move costs a GPU about 1/20 of the time until the next one, whatever a move
  /// costs (see min_interval()).
  double min_interval_s = -1;
  double unknown_remaining_s = 3600;  ///< whole-GPU seconds left of a job that has no estimate
  double overrun_remaining_s = 60;    ///< ... and of one that has run past its estimate
  double max_horizon_s = 86400;       ///< the longest time a gain is counted over
  size_t max_queue_scan = 64;         ///< queued jobs considered per plan, in rank order
  /// alpha: a job's speed counts (1 / its best efficiency)^alpha, efficiency being speed per compute slice
  /// relative to the whole GPU's. 0 maximises summed speed (MISO), which favours average JCT; 1 the rate at
  /// which the work is done at each job's most efficient slice size, which favours makespan: a sweep's base
  /// retrievers, that gain little from packing, then wait less behind embedding jobs that gain a lot.
  /// bench/sim --mig measured 0, 0.25, 0.5, 0.75 and 1; 0.25 was the best compromise (see the README).
  double efficiency_weight = 0.25;
  /// A batch's end: once no GPU job is queued and none arrived for drain_after_s (negative: never), the jobs
  /// running are the last ones and the makespan is what is left to win. A job that even at its most efficient
  /// slice size would run past the work left (every job at its most efficient size, over these GPUs) by a factor
  /// c > 1 then counts c^lateness_weight more (c at most 10), so that the long jobs take the larger slices and
  /// the jobs end nearer together. bench/sim --mig (b), sweep:200 on 8xH200, seeds 1-10: mean makespan 1.121x
  /// -> 1.086x the work bound (1.101x before jobs moved to GPUs with room, step 3), runs over 1.10x 7 -> 3,
  /// average JCT +0.6 %. While jobs keep arriving, average
  /// JCT is what matters: from the first empty queue on (drain_after_s 0) the weight cost (a), MISO's trace,
  /// 20.5 % -> 15.9 % below the best static layout (mean of seeds 1-5); 300 s 20.1 %, 1,000 s and 3,000 s 20.5 %.
  double drain_after_s = 1000;
  double lateness_weight = 0.5;  ///< 0.25 / 0.5 / 0.75 / 1: (b) mean of seeds 1-5 1.094 / 1.087 / 1.095 / 1.096
  /// Dynamic batch is on (an ordering policy "+dynbatch"): a resizable job may be planned on an instance whose
  /// memory holds its min_batch_size (JobView::memory), where it starts at the largest batch that fits.
  bool shrink = false;
};

/// The seconds a moved job makes no progress: checkpoint + restart + one MIG destroy and one create step.
double move_seconds(const RebalanceOptions& options);
/// options.min_interval_s, or when negative kIntervalMoves x move_seconds(options). On MISO's trace the best
/// fixed interval was about 20 moves' cost both at ragmig's default cost (34 s: 600 s best of 0-1,200) and at
/// MISO's 5 s (0-100 s best; bench/sim).
constexpr double kIntervalMoves = 20;
double min_interval(const RebalanceOptions& options);

/// A GPU the rebalancer may re-lay out, and when it last moved a running job (-infinity: never).
struct RebalanceGpu {
  PlannableGpu gpu;
  double last_move_at = -1e300;
};

/// One GPU to re-lay out.
struct GpuChange {
  int gpu = 0;                      ///< gpu::GpuState::index
  gpu::Layout target;
  size_t steps = 0;                 ///< MIG destroy and create steps from the current layout
  std::vector<sched::JobId> moved;  ///< running jobs on this GPU to checkpoint and stop first
  /// Jobs moved here (from this or another GPU) or planned here from the queue, and the instance of `target`
  /// held for each until it starts there.
  std::vector<std::pair<sched::JobId, gpu::Placement>> reserved;
};

using SpeedOf = std::function<SliceSpeeds(const sched::JobView&)>;

/// The plan for the view's jobs on `gpus` (see the file comment). GPUs that do not change are left out.
/// `queue_order`: queued jobs in the order the ordering policy would start them (sched::Policy::queue_order);
/// jobs it leaves out follow by priority, then submission. `waiting`, when given: the queued jobs the plan
/// looked at and gave no instance, sorted (ClusterView::plan_waiting).
std::vector<GpuChange> plan_rebalance(const sched::ClusterView& view, const std::vector<RebalanceGpu>& gpus,
                                      const SpeedOf& speed_of, const RebalanceOptions& options,
                                      const std::vector<sched::JobId>& queue_order = {},
                                      std::vector<sched::JobId>* waiting = nullptr);

}  // namespace ragmig::exec
