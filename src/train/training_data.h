// Training examples turned into token ids once, before the loop: distinct passages are tokenized once
// (SQuAD repeats each paragraph for ~4.6 questions), and each step's batch is assembled from ids.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/training_record.h"
#include "text/beir.h"
#include "text/pairs.h"
#include "text/prompts.h"
#include "text/tokenizer.h"
#include "train/grad_step.h"
#include "train/train_config.h"

namespace ragmig::train {

struct TokenizedData {
  std::vector<std::vector<int32_t>> queries;    ///< per example
  std::vector<std::vector<int32_t>> passages;   ///< distinct passages: positives and hard negatives
  std::vector<int64_t> positive;                ///< example -> passage row (its first positive)
  std::vector<std::vector<int64_t>> more_positives;  ///< example -> rows of its other positives ("pos" arrays)
  std::vector<std::vector<int64_t>> negatives;  ///< example -> passage rows of its hard negatives
  std::vector<int64_t> batch_key;               ///< example -> key the samplers keep apart (text/batch_keys.h:
                                                ///< examples joined by a positive or a query text share one)
  int64_t examples() const { return static_cast<int64_t>(queries.size()); }
};

struct TrainingExamples {
  std::vector<text::TrainingExample> examples;
  /// The split the examples' queries came from and those held out of it (ragmig.json's "training"); none
  /// when the examples have no query ids (raw-text pairs, pairs rows without "query_id").
  std::optional<model::TrainingQueries> queries;
  /// Qrels rows of a BEIR folder left out for a blank query or document (text::examples_from_beir).
  int64_t blank_skipped = 0;
};

/// Reads the examples named by `cfg` (BEIR folder + split, a pairs file, or with cfg.pretrain pairs made from
/// raw text by `seed`), leaves out the examples of cfg.holdout_queries queries (text::hold_out_queries), then
/// keeps the first cfg.max_examples. `beir` is the already-read BEIR folder when cfg.beir is set. Throws
/// DataError when none is left, or when a hold-out is asked of examples without query ids.
TrainingExamples load_examples(const DataConfig& cfg, const text::BeirFolder* beir, uint64_t seed);

/// Texts to build a vocabulary from: every distinct passage (the whole corpus for BEIR) and every query.
std::vector<std::string> vocabulary_texts(const std::vector<text::TrainingExample>& examples,
                                          const text::BeirFolder* beir);

/// Token ids of every query and distinct passage, `prompts` first (text/prompts.h), within cfg's token limits.
TokenizedData tokenize(const std::vector<text::TrainingExample>& examples, const text::Tokenizer& tokenizer,
                       const DataConfig& cfg, const text::Prompts& prompts = {});

/// Each example's tokens as length grouping sorts them (text::length_grouped_batches): its query's and its longest
/// positive's (with a "pos" array any of them may be the one drawn at a step, so the batch is padded to that).
std::vector<int64_t> grouping_lengths(const TokenizedData& data);

/// The batch of examples `rows`: queries, their positives (where an example has several, one drawn by seed, step
/// and its place in the batch, each equally likely), then `hard_negatives` negatives per query. Where
/// an example has more negatives than asked (a mined pool), a different draw of them is taken at every step;
/// where it has fewer, the rest are passages drawn at random. Never drawn: a positive of the batch (the loss
/// scores every hard negative against every query, so it would be a negative of its own query; sentence-
/// transformers' no-duplicates sampler keeps such rows out of one batch instead), which leaves an example's
/// own negatives fewer where they clash. Draws are deterministic from seed and step, so a resumed run draws what
/// an uninterrupted one did. `first_index` is the position of rows[0] in the global batch `batch_rows` (data
/// parallelism; empty: `rows` is the batch), so a replica draws what one process would for the same rows. The ids are
/// put on `device`; the masks stay on the host (pinned for a GPU: see PairBatch).
PairBatch assemble_batch(const TokenizedData& data, std::span<const int64_t> rows, int64_t hard_negatives,
                         int32_t pad_id, uint64_t seed, int64_t step, const torch::Device& device,
                         int64_t first_index = 0, std::span<const int64_t> batch_rows = {});

}  // namespace ragmig::train
