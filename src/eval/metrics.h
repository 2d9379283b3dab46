// Retrieval metrics exactly as trec_eval (and pytrec_eval, which BEIR uses) define them. A query's run is
// first put in trec_eval's order: score descending, ties broken by document id in descending byte order
// (trec_eval ignores the ranks written in a run). Then, over the top k with R = documents graded >= the
// relevance level (1):
//   nDCG@k   = sum rel_i / log2(i + 1) over ranks i <= k (gain = grade, positive grades only), divided by
//              the same sum over the grades of the qrels sorted descending (trec_eval's ndcg_cut); 0 if none
//   Recall@k = |relevant in top k| / |R|          P@k = |relevant in top k| / k
//   MAP@k    = sum over relevant ranks i <= k of (relevant so far / i), divided by |R| (map_cut)
//   MRR@k    = 1 / rank of the first relevant document within the top k, else 0
// Means are over every query that has qrels (a query with no run scores 0, as trec_eval -c). Pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "eval/qrels.h"
#include "eval/run_file.h"

namespace ragmig::eval {

enum class MetricKind { kNdcg, kRecall, kPrecision, kMrr, kMap };

struct Metric {
  MetricKind kind = MetricKind::kNdcg;
  int64_t k = 10;
  /// "ndcg@10", "recall@100", "p@10", "mrr@10", "map@100" (the JSON keys of ragmig eval).
  std::string name() const;
  bool operator==(const Metric&) const = default;
};

/// Inverse of name(); ConfigError for anything else (k must be >= 1).
Metric parse_metric(const std::string& name);
/// nDCG@{1,3,5,10,100}, Recall@{1,3,5,10,20,100,1000}, P@{1,10}, MRR@{10,100}, MAP@{10,100}.
std::vector<Metric> default_metrics();

struct MetricOptions {
  int32_t relevance_level = 1;        ///< binary metrics count grades >= this (trec_eval -l)
  bool ignore_identical_ids = false;  ///< drop a document whose id is the query's own (BEIR's ArguAna rule)
};

/// trec_eval's order (see above); with ignore_identical_ids the query's own id is removed first.
std::vector<ScoredDoc> trec_order(const std::vector<ScoredDoc>& docs, const std::string& query_id,
                                  const MetricOptions& opts);

/// The metrics of one query, in the order of `metrics`. `docs` may be in any order.
std::vector<double> query_metrics(const std::vector<ScoredDoc>& docs, const QueryJudgments& judged,
                                  const std::string& query_id, const std::vector<Metric>& metrics,
                                  const MetricOptions& opts);

struct MetricReport {
  std::vector<Metric> metrics;
  std::vector<double> mean;                              ///< per metric
  std::map<std::string, std::vector<double>> per_query;  ///< query id -> per metric
  int64_t queries = 0;
  /// The mean of the metric called `name`; InternalError when it was not computed.
  double value(const std::string& name) const;
};

/// Evaluates every query of `judgments` (those missing from `run` score 0).
MetricReport evaluate_run(const TrecRun& run, const Judgments& judgments, const std::vector<Metric>& metrics,
                          const MetricOptions& opts = {});
/// The same over a run handed out one query at a time: run_of(query id) is called once per judged query,
/// so a caller never holds the whole run (k = 1000 for thousands of queries is millions of entries).
MetricReport evaluate_run(const std::function<std::vector<ScoredDoc>(const std::string&)>& run_of,
                          const Judgments& judgments, const std::vector<Metric>& metrics, const MetricOptions& opts = {});

}  // namespace ragmig::eval
