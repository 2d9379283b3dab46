// Fusion chosen on validation queries, never on the queries it is measured on: the validation queries are
// carved from another split's judgments (the training queries by default), every fusion of a fixed grid is
// scored there, and the best is what the evaluated queries get — unless the default fusion, Linear(alpha=0.5),
// is within one standard error of it: on a hundred or so queries the grid's best often wins by noise (17
// candidates), and the default is what one would pick without validation. The grid holds both parts alone —
// Linear with alpha 0 is BM25's ranking, alpha 1 the dense one — and the default is kept only where it scores
// no lower than either, so on validation the choice never loses to a part, and a weak dense model makes the
// choice fall back to BM25. Pure functions of their inputs.
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

/// The fusion kept unless validation clearly prefers another: Linear(alpha=0.5), both parts weighed alike.
index::FusionSpec default_fusion();

/// Which candidate to take, from scores[c][q] (candidate c on validation query q, every row as long): the best
/// mean (the first of equals) — or `prior` where its mean is within one standard error of the best's (of the
/// per-query differences best - prior) and at least every mean of `floor` (the parts alone). Pure.
size_t pick_with_prior(const std::vector<std::vector<double>>& scores, size_t prior, const std::vector<size_t>& floor);

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
  index::FusionSpec best;           ///< the best mean on validation (chosen, unless the default was kept)
  double standard_error = 0;        ///< of the per-query differences best - default (0 without the default)
  std::vector<FusionTrial> trials;  ///< every spec of the grid, in grid order
  std::string metric;               ///< e.g. "ndcg@10"
  int64_t queries = 0;              ///< validation queries scored
};

/// Scores every spec of `grid` on the validation queries `query_ids` (dense[q] and sparse[q] are query q's
/// ranked lists, `doc_id(row)` a hit's document id) by `metric` at depth `depth`, and picks one by
/// pick_with_prior: default_fusion() where the grid holds it, with the grid's parts alone as the floor.
FusionChoice choose_fusion(const std::vector<index::FusionSpec>& grid, const std::vector<std::string>& query_ids,
                           const HitLists& dense, const HitLists& sparse,
                           const std::function<std::string(int64_t)>& doc_id, const Judgments& judgments,
                           const Metric& metric, int64_t depth);

}  // namespace ragmig::eval
