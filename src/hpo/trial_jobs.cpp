// Trial and evaluation jobs of a sweep (see trial_jobs.h).
#include "hpo/trial_jobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.h"

namespace ragmig::hpo {
namespace {

// `ragmig eval` of one retriever on the sweep's evaluation split, at the lengths training used, as a job
// named after what it evaluates, stating the work of its encoder (`flops`; 0: not counted).
sched::JobSpec evaluation(const SweepPlan& plan, const std::string& name, const std::string& retriever,
                          const std::string& model_dir, double flops) {
  const SweepSpec& s = plan.spec;
  sched::JobSpec job;
  job.name = eval_job_name(name);
  job.argv = {"ragmig", "eval", "--data", s.eval.data, "--split", s.eval.split, "--retriever", retriever};
  if (!model_dir.empty()) job.argv.insert(job.argv.end(), {"--model", model_dir});
  if (retriever == "hybrid") job.argv.insert(job.argv.end(), {"--fusion", s.eval.fusion});
  if (retriever != "bm25" && s.eval.dimensions > 0)
    job.argv.insert(job.argv.end(), {"--dimensions", std::to_string(s.eval.dimensions)});
  job.argv.insert(job.argv.end(), {"--metrics", s.eval.metric, "--max-queries", std::to_string(s.eval.max_queries),
                                   "--max-query-tokens", std::to_string(plan.max_query_tokens),
                                   "--max-passage-tokens", std::to_string(plan.max_passage_tokens),
                                   "--out", eval_result_path(plan, name), "--no-cache", "--quiet"});
  if (plan.threads > 0) job.argv.insert(job.argv.end(), {"--threads", std::to_string(plan.threads)});
  job.cwd = plan.cwd;
  sched::Need need = sched::parse_need(s.slots);
  need.replicas = 1;  // evaluation is one process, whatever the training's replicas
  job.need = need;
  job.priority = s.priority + 1;
  job.work.flops = flops;
  return job;
}

}  // namespace

std::string trial_id(size_t index) { return fmt::format("t{:02d}", index); }

std::string eval_job_name(const std::string& trial) { return trial + " eval"; }

std::string eval_result_path(const SweepPlan& plan, const std::string& name) {
  return (std::filesystem::path(plan.dir) / "evals" / (name + ".json")).string();
}

sched::JobSpec train_job(const SweepPlan& plan, size_t index) {
  const SweepSpec& s = plan.spec;
  sched::JobSpec job;
  job.name = trial_id(index);
  job.argv = {"ragmig", "train", s.base, "--quiet"};
  const auto set = [&](const std::string& assignment) { job.argv.insert(job.argv.end(), {"--set", assignment}); };
  for (const auto& assignment : s.set) set(assignment);
  for (const auto& [key, value] : plan.trials.at(index)) set(to_override(key, value));
  // The rung evaluations: recall on a sub-corpus, cheap enough to run at every rung (train/dense_eval.h).
  set(to_override("eval.split", s.eval.split));
  set(fmt::format("eval.k={}", plan.rung_k));
  set(fmt::format("eval.max_queries={}", s.asha.queries));
  set(fmt::format("eval.max_passages={}", s.asha.passages));
  set(fmt::format("eval.at_steps=[{}]", fmt::join(plan.rungs, ", ")));
  set("eval.at_end=false");  // the finished model is scored by its evaluation job on the whole split
  if (s.eval.dimensions > 0) set(fmt::format("eval.dimensions={}", s.eval.dimensions));  // rungs at the scored size
  if (plan.threads > 0) set(fmt::format("train.threads={}", plan.threads));
  job.cwd = plan.cwd;
  job.need = sched::parse_need(s.slots);
  job.priority = s.priority;
  if (index < plan.trial_work.size()) job.work = plan.trial_work[index];
  if (s.min_batch_fraction > 0 && !job.need.cpu && index < plan.trial_work.size()) {
    job.batch_size = plan.trial_work[index].batch_size;
    job.min_batch_size = std::max<int64_t>(
        2, static_cast<int64_t>(std::ceil(s.min_batch_fraction * static_cast<double>(job.batch_size))));
    job.min_batch_size = std::min(job.min_batch_size, job.batch_size);
  }
  return job;
}

sched::JobSpec eval_job(const SweepPlan& plan, size_t index, const std::string& model_dir) {
  return evaluation(plan, trial_id(index), plan.spec.eval.fusion.empty() ? "dense" : "hybrid", model_dir,
                    index < plan.eval_flops.size() ? plan.eval_flops[index] : 0);
}

sched::JobSpec baseline_job(const SweepPlan& plan, const std::string& baseline) {
  if (baseline == "bm25") return evaluation(plan, baseline, "bm25", "", 0);
  if (baseline != "zero-shot")
    throw ConfigError("unknown baseline '" + baseline + "' (expected \"bm25\" or \"zero-shot\")");
  if (plan.init_model.empty())
    throw ConfigError("\"zero-shot\" evaluates the base config's model.init before training, and it has none "
                      "(it trains from scratch)");
  return evaluation(plan, baseline, plan.spec.eval.fusion.empty() ? "dense" : "hybrid", plan.init_model,
                    plan.zero_shot_flops);
}

}  // namespace ragmig::hpo
