// Fusion chosen on validation queries, never on the queries it is measured on: the validation queries are
// carved from another split's judgments (the training queries by default), every fusion of a fixed grid is
// scored there, and the best is what the evaluated queries get. The grid holds both parts alone — Linear
// with alpha 0 is BM25's ranking, alpha 1 the dense one — so on validation the choice never loses to either
// part, and a weak dense model makes the choice fall back to BM25. Pure functions of their inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "eval/metrics.h"
#include "eval/qrels.h"
#include "eval/run_file.h"
#include "index/fusion.h"

namespace ragmig::eval {

using HitLists = std::vector<std::vector<index::Hit>>;

/// Query query_ids[q]'s hits as a run list of document ids (`doc_id(row)`), each cut to `depth`.
TrecRun hits_to_run(const std::vector<std::string>& query_ids, const HitLists& hits,
                    const std::function<std::string(int64_t)>& doc_id, int64_t depth);

/// Linear(alpha) for alpha 0, 0.1, ..., 1 (BM25 alone first, dense alone last), then RRF(k) for k in
/// 5, 10, 20, 40, 60, 100: the order ties are broken in.
std::vector<index::FusionSpec> fusion_grid();

/// Up to `max_queries` queries of `validation` (judged relevant at least once) that `evaluated` does not
/// hold, chosen by a seeded hash of their ids (text::carve_queries: the same ids whatever the order of the
/// files, and the ones a trainer with data.holdout_queries leaves out), in id order.
Judgments carve_validation(const Judgments& validation, const Judgments& evaluated, int64_t max_queries, uint64_t seed);

struct FusionTrial {
  index::FusionSpec spec;
  double score = 0;  ///< the metric's mean over the validation queries
};

struct FusionChoice {
  index::FusionSpec chosen;
  std::vector<FusionTrial> trials;  ///< every spec of the grid, in grid order
  std::string metric;               ///< e.g. "ndcg@10"
  int64_t queries = 0;              ///< validation queries scored
};

/// Scores every spec of `grid` on the validation queries `query_ids` (dense[q] and sparse[q] are query q's
/// ranked lists, `doc_id(row)` a hit's document id) by `metric` at depth `depth`; the first best wins.
FusionChoice choose_fusion(const std::vector<index::FusionSpec>& grid, const std::vector<std::string>& query_ids,
                           const HitLists& dense, const HitLists& sparse,
                           const std::function<std::string(int64_t)>& doc_id, const Judgments& judgments,
                           const Metric& metric, int64_t depth);

}  // namespace ragmig::eval
