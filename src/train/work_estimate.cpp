// A training run's FLOPs from its config (see work_estimate.h).
#include "train/work_estimate.h"

#include <iterator>
#include <set>

#include "model/encoder_flops.h"

namespace ragmig::train {

TrainingWork training_work(const TrainConfig& cfg) {
  const model::BertConfig shape = encoder_shape(cfg);
  const double query = model::encoder_flops(shape, cfg.data.max_query_tokens);
  const double passage = model::encoder_flops(shape, cfg.data.max_passage_tokens);
  const auto& t = cfg.train;
  double passes = cfg.lora.rank > 0 ? 2 : 3;
  if (t.accumulation == "gradcache") passes += 1;
  TrainingWork work;
  work.steps = t.max_steps;
  work.step_flops = passes * static_cast<double>(t.batch_size) *
                    (query + static_cast<double>(1 + t.hard_negatives) * passage);
  if (!cfg.eval.split.empty()) {
    std::set<int64_t> at(cfg.eval.at_steps.begin(), cfg.eval.at_steps.end());
    at.insert(t.max_steps);
    const auto evaluations = static_cast<double>(std::distance(at.begin(), at.upper_bound(t.max_steps)));
    work.eval_flops = evaluations * (static_cast<double>(cfg.eval.max_queries) * query +
                                     static_cast<double>(cfg.eval.max_passages) * passage);
  }
  return work;
}

}  // namespace ragmig::train
