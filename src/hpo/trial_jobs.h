// A sweep's trials as scheduler jobs: one `ragmig train` per trial (its parameters and its rung
// evaluations as --set overrides) and, once that is done, one `ragmig eval` of the model it wrote. Pure
// functions of the plan that `ragmig batch` resolved from the sweep file, the base config and the machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpo/search_space.h"
#include "hpo/sweep_spec.h"
#include "sched/job.h"

namespace ragmig::hpo {

struct SweepPlan {
  SweepSpec spec;
  std::vector<ParamValues> trials;
  std::vector<int64_t> rungs;      ///< ASHA rung steps; empty = no early stopping
  int64_t max_steps = 0;           ///< every trial's full length (train.max_steps of the resolved base)
  int64_t rung_k = 20;             ///< workers report recall@rung_k at the rungs
  int threads = 0;                 ///< intra-op threads per job (CPU slots share the cores); 0 = the job's default
  int64_t max_query_tokens = 32;   ///< the final evaluation embeds with the lengths training used
  int64_t max_passage_tokens = 128;
  std::string init_model;          ///< the base config's model.init ("" = from scratch): the zero-shot baseline
  std::string dir;                 ///< the sweep's state folder
  std::string cwd;                 ///< where the jobs run: relative paths of the configs resolve here
  /// Each trial's training FLOPs with its rung evaluations, its steps and the FLOPs of one at its resolved
  /// train.batch_size (train/work_estimate.h; empty: not resolved): the work its job states, which the scheduler
  /// prices as its estimate at the rate the steps measure (sched/work_pricer.h).
  std::vector<sched::JobSpec::Work> trial_work;
  /// What the evaluation of each trial's model (eval_job) and of the base config's model.init (the zero-shot
  /// baseline) computes: the work those jobs state (empty, 0: not counted).
  std::vector<double> eval_flops;
  double zero_shot_flops = 0;

  /// "recall@20"
  std::string rung_metric() const { return "recall@" + std::to_string(rung_k); }
};

/// "t00", "t01", ... (at least two digits, so names sort in trial order up to 100 trials).
std::string trial_id(size_t index);
/// The job name of a trial's or a baseline's evaluation: "t03 eval", "bm25 eval".
std::string eval_job_name(const std::string& trial);
/// Where the evaluation of a trial ("t03") or a baseline ("zero-shot") writes its JSON: <dir>/evals/t03.json.
std::string eval_result_path(const SweepPlan& plan, const std::string& name);

/// `ragmig train BASE --quiet --set <sweep set>... --set <param>... --set eval.*` on the sweep's slots, stating
/// its work (JobSpec::work: trial_work's; none without it).
sched::JobSpec train_job(const SweepPlan& plan, size_t index);
/// `ragmig eval --retriever dense --model MODEL_DIR ... --out <eval_result_path>`: the sweep's metric on its
/// evaluation split, ahead of queued trainings (priority + 1) so finished trials report early. With
/// [eval] fusion, `--retriever hybrid --fusion F`: the model alone and fused with BM25 in one run. Its work is
/// eval_flops' (BM25's is not counted).
sched::JobSpec eval_job(const SweepPlan& plan, size_t index, const std::string& model_dir);
/// A baseline's evaluation, made like a trial's: "bm25" (`--retriever bm25`) or "zero-shot" (plan.init_model
/// untrained; its work zero_shot_flops). An unknown name or a zero-shot without init_model is a ConfigError.
sched::JobSpec baseline_job(const SweepPlan& plan, const std::string& baseline);

}  // namespace ragmig::hpo
