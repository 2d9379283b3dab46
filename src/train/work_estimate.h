// What a training run computes, counted from its config before it starts: the work that `ragmig batch` tells
// the scheduler each trial is and `ragmig submit` each `ragmig train` job (JobSpec::estimate_s and JobSpec::work,
// priced at the FLOP rate the jobs measure: sched/work_rate.h), so that sjf, ljf and srtf order them by size. A
// count of the big products, not a measurement: texts are counted at their length caps (the padding and the
// shorter texts that unpadded training saves are not subtracted), so it ranks runs of one data set well; the
// measured rate absorbs the rest. Torch-free.
#pragma once

#include <cstdint>

#include "train/train_config.h"

namespace ragmig::train {

struct TrainingWork {
  double step_flops = 0;  ///< one optimiser step: forward and backward of the batch's queries and passages
  int64_t steps = 0;      ///< train.max_steps
  double eval_flops = 0;  ///< the recall evaluations (eval.at_steps and after the last step), forward only

  double total() const { return step_flops * static_cast<double>(steps) + eval_flops; }
};

/// Training FLOPs of `cfg`: per step, train.batch_size queries at data.max_query_tokens and (1 +
/// train.hard_negatives) passages per query at data.max_passage_tokens, through the encoder (encoder_shape()),
/// 3x the forward (backward computes gradients of the activations and of the weights); 2x with LoRA (the frozen
/// weights get none); GradCache adds a forward without gradients (+1x). An evaluation embeds eval.max_queries
/// queries and eval.max_passages passages (0, all of them: not counted, the corpus is not read here). Throws as
/// encoder_shape().
TrainingWork training_work(const TrainConfig& cfg);

}  // namespace ragmig::train
