// A small evaluator that lives in train until the eval module lands: exact dense search of a BEIR corpus
// with a dual encoder, scored as recall@k against a qrels split. Enough to judge a training run.
#pragma once

#include <cstdint>
#include <string>

#include "model/dual_encoder.h"
#include "model/embed.h"
#include "text/beir.h"
#include "text/prompts.h"
#include "text/tokenizer.h"

namespace ragmig::train {

struct RecallOptions {
  int64_t k = 20;
  int64_t max_queries = 0;  ///< 0 = all queries that have qrels
  /// > 0: search only a sub-corpus of this many passages: every relevant passage of the evaluated queries,
  /// then the others in corpus order. Recall over a fixed sub-corpus ranks models as the whole corpus does
  /// at a fraction of the encoding cost (rung evaluations of a sweep).
  int64_t max_passages = 0;
  int64_t batch_size = 128;
  /// > 0: search with the leading this many dimensions of each embedding, renormalised when the model normalises
  /// (matryoshka_prefix, as eval::leading_dimensions).
  int64_t dimensions = 0;
  int64_t max_query_tokens = 32;
  int64_t max_passage_tokens = 128;
  text::Prompts prompts;  ///< put before queries and passages (text/prompts.h)
};

struct RecallResult {
  double recall = 0;      ///< mean over queries of |relevant ∩ top-k| / |relevant|
  int64_t queries = 0;
  int64_t passages = 0;
  double seconds = 0;
};

/// Embeds the corpus (or the sub-corpus) and the qrels' queries (in eval mode, batches sorted by length) and searches
/// exactly (chunked matmul + top-k). Relevant = qrels score > 0; unknown ids throw DataError(file:line).
RecallResult evaluate_recall(model::DualEncoder& model, const text::Tokenizer& tokenizer,
                             const text::BeirFolder& beir, const text::Qrels& qrels, const RecallOptions& opts,
                             const torch::Device& device);

/// The embedder lives in model/embed.h, shared with the eval module.
using model::embed_texts;

}  // namespace ragmig::train
