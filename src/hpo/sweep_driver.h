// The sweep's side of `ragmig batch`, run between the scheduler's passes: it submits the trials, feeds the
// workers' rung evaluations to ASHA and stops the losers, queues an evaluation of every finished model, and
// keeps each trial's standing. Every ASHA decision is appended to <dir>/asha.jsonl before it is acted on,
// so a driver started again on the same state folder replays its predecessor's decisions, and trials are
// matched to jobs by name, so none is submitted twice. With [asha] order = "trial" (the default) decisions
// are taken in trial order at each rung (a report waits until every earlier trial has reported there or
// never will), and a trained model is evaluated only once its decisions are taken, so the decisions and the
// leaderboard do not depend on the machine's timing. Trials are submitted stating their FLOPs (JobSpec::work),
// which the scheduler prices as their estimates (sched/work_pricer.h); the driver measures the same rate from
// every trial's progress (sched/work_rate.h) for results.json and the report.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hpo/asha.h"
#include "hpo/eval_scores.h"
#include "hpo/trial_jobs.h"
#include "sched/work_rate.h"
#include "sched/clock.h"
#include "sched/scheduler.h"
#include "sched/store.h"

namespace ragmig::hpo {

struct RungResult {
  int64_t step = 0;
  double value = 0;
  AshaAction action = AshaAction::Continue;
};

/// What its final evaluation gave a trial or a baseline: nothing until that evaluation is done.
struct Scored {
  std::optional<double> metric;   ///< the sweep's metric, the model (or BM25) alone
  std::optional<double> hybrid;   ///< with [eval] fusion: the same, fused with BM25
  std::string fusion;             ///< the fusion that gave `hybrid`
  void take(const EvalScores& scores) {
    metric = scores.alone;
    hybrid = scores.hybrid;
    fusion = scores.fusion;
  }
};

struct TrialStatus : Scored {
  std::string id;
  ParamValues params;
  sched::JobId train_job = 0, eval_job = 0;
  /// queued | running | waiting (trained; a rung decision waits for earlier trials) | evaluating | done |
  /// stopped (by ASHA) | failed | cancelled
  std::string state = "queued";
  std::vector<RungResult> rungs;
  int64_t steps = 0;              ///< training steps done
  double wall_s = 0;              ///< training time over all attempts
  double flops = 0;               ///< a full run's training FLOPs (SweepPlan::trial_work; 0: not counted)
  double estimate_s = 0;          ///< flops at the median of the trials' measured rates (0 until one is measured);
                                  ///< the scheduler prices by a job's own rate, or those of jobs of like cost per
                                  ///< sample (sched/work_pricer.h), so the two can differ
  std::string slot;               ///< where its training ran last ("cpu:0", "mig:0:1g.18gb@0", "+" between replicas)
  std::string reason;             ///< why it failed or stopped
};

/// A baseline evaluated beside the trials ([eval] baselines).
struct BaselineStatus : Scored {
  std::string id;                   ///< "bm25", "zero-shot"
  sched::JobId eval_job = 0;
  std::string state = "queued";     ///< queued | evaluating | done | failed | cancelled
  std::string reason;               ///< why it failed
};

/// done, stopped, failed and cancelled trials change no more.
bool is_final(const std::string& trial_state);

class SweepDriver {
 public:
  SweepDriver(SweepPlan plan, sched::Store& store, sched::Scheduler& scheduler, sched::Clock& clock);

  /// Replays <dir>/asha.jsonl, submits the trials the store does not have yet, and re-issues stops that
  /// a previous driver logged but did not live to carry out. Throws DataError for a log that does not
  /// replay to the decisions it records (written by another sweep).
  void start();
  /// One round after a scheduler pass; returns true when a trial changed state or reported a rung.
  bool after_pass();
  bool finished() const;

  const SweepPlan& plan() const { return plan_; }
  const std::vector<TrialStatus>& trials() const { return trials_; }
  const std::vector<BaselineStatus>& baselines() const { return baselines_; }
  /// {"sweep", "metric", "rung_metric", "rungs", "flops_per_s" (the measured rate; null before one), "trials":
  /// [{id, params, metric, steps, wall_s, slot, state, rungs, train_job, eval_job, flops, estimate_s}]}, trials
  /// in id order (estimate_s once a rate is measured);
  /// with [eval] fusion, trials have "hybrid" and "fusion"; with [eval] baselines, "baselines": [{id, state,
  /// metric, eval_job}] (and hybrid, fusion).
  nlohmann::json results_json() const;

 private:
  void read_events(size_t index);
  void take_rung(size_t index, int64_t step, double value);
  void decide(size_t index, int64_t step, double value);
  /// order = "trial": takes the waiting reports whose earlier trials are all settled at their rung.
  void decide_in_trial_order();
  /// Whether trial `index`, with no report at a rung yet, never will report there.
  bool never_reports(size_t index) const;
  /// "stopped by ASHA at step S: recall@k V below the rung's cutoff"
  std::string stop_reason(const RungResult& rung) const;
  bool refresh(size_t index);
  /// The rate every trial's progress so far measures, and each trial's FLOPs at it, for results and the report.
  void measure_rate();
  bool refresh_baseline(size_t index);
  /// Where the evaluation job `job` of `name` ("t03", "bm25") stands: its state (queued, evaluating, done,
  /// failed, cancelled), and its scores once done or why it failed.
  struct Evaluation {
    std::string state;
    std::optional<EvalScores> scores;
    std::string reason;
  };
  Evaluation evaluation(sched::JobId job, const std::string& name) const;
  std::string asha_log_path() const;

  SweepPlan plan_;
  sched::Store& store_;
  sched::Scheduler& scheduler_;
  sched::Clock& clock_;
  Asha asha_;
  std::vector<TrialStatus> trials_;
  std::vector<BaselineStatus> baselines_;
  std::map<std::string, size_t> index_of_;   ///< trial id -> index
  std::vector<int64_t> events_seen_;         ///< per trial: seq of the last event of its training read
  std::vector<bool> training_over_;          ///< per trial: its training job ended and its events are read
  std::vector<sched::ProgressWindow> windows_;  ///< per trial: its progress in its current attempt
  std::vector<double> speeds_;               ///< per trial: the speed of the slots it trained on last
  /// The sweep's rate from every progress window so far: what results and the report show, the same from any
  /// driver that has read the same events (the scheduler measures its own, for the estimates, from the events it
  /// sees while it runs).
  std::optional<double> measured_rate_;
  /// order = "trial": rung -> trial index -> (step, value) reported and not yet decided
  std::map<int64_t, std::map<size_t, std::pair<int64_t, double>>> waiting_;
  std::map<int64_t, size_t> settled_;        ///< rung -> trials [0, n) settled there, in trial order
  bool changed_ = false;
};

}  // namespace ragmig::hpo
