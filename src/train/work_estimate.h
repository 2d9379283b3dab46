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

/// What an evaluation embeds where eval.max_queries or eval.max_passages is 0 (all of them); 0: not known, and
/// that share is not counted.
struct EvalSizes {
  int64_t queries = 0;
  int64_t passages = 0;
};

/// Training FLOPs of `cfg`: per step, train.batch_size queries at data.max_query_tokens and (1 +
/// train.hard_negatives) passages per query at data.max_passage_tokens, through the encoder (encoder_shape()),
/// 3x the forward (backward computes gradients of the activations and of the weights); 2x with LoRA (the frozen
/// weights get none); GradCache adds a forward without gradients (+1x). An evaluation embeds eval.max_queries
/// queries (at most `all`'s, where known) and eval.max_passages passages, `all`'s where those are 0. Throws as
/// encoder_shape().
TrainingWork training_work(const TrainConfig& cfg, const EvalSizes& all = {});

/// One evaluation of `cfg`'s encoder as training_work() counts it: eval.max_queries queries at
/// data.max_query_tokens and eval.max_passages passages at data.max_passage_tokens (`all`'s where 0), forward
/// only (what `ragmig eval` of the trained model computes on the same data).
double evaluation_flops(const TrainConfig& cfg, const EvalSizes& all = {});

inline constexpr int64_t kCountedCorpusBytes = int64_t{32} << 20;

/// The sizes of `cfg`'s evaluation data that a 0 (all) of eval.max_queries or eval.max_passages asks for (the
/// other left 0; both without eval.split): the distinct queries of data.beir's qrels for eval.split, and the
/// documents of its corpus, counted line by line up to `counted_bytes` of the file (compressed bytes for .gz) and
/// past them extrapolated by its size (a corpus of millions costs no more than one of a hundred thousand).
/// Throws InputFileError for a missing file, DataError for a malformed qrels row.
EvalSizes eval_sizes(const TrainConfig& cfg, int64_t counted_bytes = kCountedCorpusBytes);

}  // namespace ragmig::train
