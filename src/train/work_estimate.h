// What a training run computes, counted from its config before it starts: the work that `ragmig batch` tells
// the scheduler each trial is and `ragmig submit` each `ragmig train` job (JobSpec::estimate_s and JobSpec::work,
// priced at the FLOP rate the jobs measure: sched/work_rate.h), so that sjf, ljf and srtf order them by size. A
// count of the big products, not a measurement: texts are counted at the lengths a sample of the data has when
// tokenized as the run tokenizes it (text_lengths; else at their caps), as unpadded training computes them (what
// a padded batch adds is not counted); the measured rate absorbs the rest. Torch-free.
#pragma once

#include <cstdint>
#include <vector>

#include "train/train_config.h"

namespace ragmig::train {

struct TrainingWork {
  double step_flops = 0;  ///< one optimiser step: forward and backward of the batch's queries and passages
  int64_t steps = 0;      ///< train.max_steps
  double eval_flops = 0;  ///< the recall evaluations (eval.at_steps and after the last step), forward only
  std::vector<int64_t> eval_steps;  ///< the steps after which they run, in order

  double total() const { return step_flops * static_cast<double>(steps) + eval_flops; }
};

/// What an evaluation embeds where eval.max_queries or eval.max_passages is 0 (all of them); 0: not known, and
/// that share is not counted.
struct EvalSizes {
  int64_t queries = 0;
  int64_t passages = 0;
};

/// How long a run's texts are in tokens as it tokenizes them (its prompt, [CLS] and [SEP] included, at most
/// data.max_query_tokens / data.max_passage_tokens): a sample of what its steps and evaluations compute on.
/// Empty: not measured, counted at the caps.
struct TextLengths {
  std::vector<int64_t> queries, passages;
};

inline constexpr int64_t kCountedTexts = 1000;

/// The lengths of the first `texts` queries and documents of data.beir (its queries and corpus: what mined
/// pairs are made of too), else of data.pairs' rows (the query; the positive and negatives), tokenized by
/// model.init's tokenizer with its prompts (the config's model.*_prompt where set), by model.vocab's WordPiece, or
/// for a vocabulary the run builds from its data, one token per word (the pieces it cuts rarer words into are
/// not counted). None for data.pretrain (its crops fill the caps). Throws as the readers (InputFileError for a
/// missing file, DataError naming a malformed row) and the model folder's (encoder_shape()).
TextLengths text_lengths(const TrainConfig& cfg, int64_t texts = kCountedTexts);

/// Training FLOPs of `cfg`: per step, train.batch_size queries and (1 + train.hard_negatives) passages per query
/// through the encoder (encoder_shape()) at `lengths`' (data.max_query_tokens and data.max_passage_tokens where
/// those are empty), 3x the forward (backward computes gradients of the activations and of the weights); 2x with
/// LoRA (the frozen weights get none); GradCache adds a forward without gradients (+1x), activation checkpointing
/// the layers' forward again in backward (+1x, the embeddings' few FLOPs counted with them). An evaluation embeds
/// eval.max_queries queries (at most `all`'s, where known) and eval.max_passages passages, `all`'s where those
/// are 0. Throws as encoder_shape().
TrainingWork training_work(const TrainConfig& cfg, const EvalSizes& all = {}, const TextLengths& lengths = {});

/// One evaluation of `cfg`'s encoder as training_work() counts it: eval.max_queries queries and eval.max_passages
/// passages (`all`'s where 0) at `lengths`' (the caps where empty), forward only (what `ragmig eval` of the
/// trained model computes on the same data).
double evaluation_flops(const TrainConfig& cfg, const EvalSizes& all = {}, const TextLengths& lengths = {});

inline constexpr int64_t kCountedCorpusBytes = int64_t{32} << 20;

/// The sizes of `cfg`'s evaluation data that a 0 (all) of eval.max_queries or eval.max_passages asks for (the
/// other left 0; both without eval.split): the distinct queries of data.beir's qrels for eval.split, and the
/// documents of its corpus, counted line by line up to `counted_bytes` of the file (compressed bytes for .gz) and
/// past them extrapolated by its size (a corpus of millions costs no more than one of a hundred thousand).
/// Throws InputFileError for a missing file, DataError for a malformed qrels row.
EvalSizes eval_sizes(const TrainConfig& cfg, int64_t counted_bytes = kCountedCorpusBytes);

}  // namespace ragmig::train
