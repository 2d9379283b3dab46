// `ragmig eval` as a library call: retrieve for every query of a BEIR split with BM25, a dense model (exact or
// through an ANN index), a fusion of both, or BM25 candidates re-scored by the dense model; score the run
// with trec_eval's metrics; report timings, cache use, the ANN index's recall against exact search, and
// every problem with the input that did not stop the evaluation. Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eval/adaptive_depth.h"
#include "eval/dense_retrieval.h"
#include "eval/eval_cache.h"
#include "eval/fusion_choice.h"
#include "eval/metrics.h"
#include "eval/qrels.h"
#include "eval/retriever_kind.h"

namespace ragmig::eval {

struct EvalOptions {
  std::string data_dir;  ///< a BEIR folder: corpus.jsonl[.gz], queries.jsonl[.gz], qrels/<split>.tsv
  std::string split = "test";
  RetrieverKind retriever = RetrieverKind::kBm25;
  std::string bm25_spec = "BM25(k1=0.9,b=0.4)";
  std::string fusion_spec = "RRF(k=60)";  ///< hybrid: first list dense, second BM25; "auto": chosen on
                                          ///< validation queries (fusion_choice.h)
  std::string fusion_validation_split = "train";  ///< fusion "auto": the split whose queries choose it
  int64_t fusion_validation_queries = 300;        ///< fusion "auto": at most this many of them
  double target_recall = 0;  ///< hybrid: > 0 fuses, per query, only as deep as the candidate pool needs for
                             ///< this recall on the validation queries (adaptive_depth.h); 0 = `candidates`
  DenseSetup dense;                       ///< model_dir required for dense, hybrid and rerank
  int64_t k = 1000;                       ///< depth of the run that is scored (and written)
  int64_t candidates = 1000;              ///< depth of each list fused (hybrid) or re-scored (rerank); a
                                          ///< re-ranked run holds at most this many documents
  int64_t max_queries = 0;                ///< 0 = every query with qrels; else the first N in id order
  std::vector<Metric> metrics = default_metrics();
  MetricOptions metric_options;
  std::string cache_dir = ".ragmig/cache";  ///< empty = no cache
  std::string run_out;                      ///< TREC run file to write; empty = none
  bool keep_run = false;                    ///< hand the scored run back in EvalResult::run (ragmig mine)
  std::string run_tag = "ragmig";
  int threads = 0;  ///< BM25 and FAISS threads (0 = all cores)
};

struct EvalResult {
  EvalOptions options;
  MetricReport report;
  int64_t corpus_size = 0;
  int64_t empty_queries = 0;           ///< blank query texts: retrieved for, and scored, as they are
  int64_t queries_without_terms = 0;   ///< BM25: nothing left after analysis, so no BM25 results
  QrelsCheck qrels_check;
  std::optional<AnnReport> ann;
  std::optional<FusionChoice> fusion_choice;  ///< fusion "auto": the grid's scores on validation queries
  /// The validation queries (fusion "auto", adaptive depth) are those the model's training held out
  /// (its ragmig.json's "training", model/training_record.h), not a carve of all of the split's.
  bool validation_held_out = false;
  /// target_recall > 0: the rule fitted on validation queries, and on the evaluated queries the mean depth
  /// taken, the pool recall it gave, and the pool recall of each fixed depth of the rule's grid.
  struct AdaptiveDepth {
    DepthRule rule;
    double mean_depth = 0, pool_recall = 0;
    std::vector<double> fixed_recall;
  };
  std::optional<AdaptiveDepth> depth;
  std::vector<std::pair<std::string, MetricReport>> parts;  ///< hybrid: "bm25" and "dense" alone, same queries
  TrecRun run;                         ///< the scored run, with options.keep_run only
  std::vector<CacheUse> cache;
  std::vector<std::string> warnings;
  std::string device;                  ///< where dense work ran ("" for BM25 only)
  std::string precision;               ///< what the embedder computed in: fp32 | bf16 ("" for BM25 only)
  std::string precision_reason;        ///< why (model::choose_precision)
  text::Prompts prompts;               ///< put before queries and passages (dense retrievers)
  int64_t dimensions = 0;              ///< the leading size of the embeddings searched (DenseRetrieval's); 0 = all
  double seconds = 0, load_seconds = 0, index_seconds = 0, embed_seconds = 0, search_seconds = 0;

  /// Metric names as keys ("ndcg@10", ...) at the top level, plus queries, seconds and the details.
  nlohmann::json to_json() const;
};

/// Runs the evaluation. `log` gets one line per stage (loading, indexing, embedding, searching). Throws
/// ConfigError / DataError for bad options or input (naming the file and line), IoError, DeviceError.
EvalResult evaluate(const EvalOptions& options, const std::function<void(const std::string&)>& log = {});

}  // namespace ragmig::eval
