// Fusion chosen on validation queries (see fusion_choice.h).
#include "eval/fusion_choice.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.h"
#include "text/query_holdout.h"

namespace ragmig::eval {

namespace {

// The standard error of the mean of a[q] - b[q] (0 for fewer than two queries).
double standard_error_of_difference(const std::vector<double>& a, const std::vector<double>& b) {
  RAGMIG_CHECK(a.size() == b.size());
  const size_t n = a.size();
  if (n < 2) return 0;
  double mean = 0;
  for (size_t q = 0; q < n; ++q) mean += a[q] - b[q];
  mean /= static_cast<double>(n);
  double var = 0;
  for (size_t q = 0; q < n; ++q) var += (a[q] - b[q] - mean) * (a[q] - b[q] - mean);
  var /= static_cast<double>(n - 1);
  return std::sqrt(var / static_cast<double>(n));
}

}  // namespace

TrecRun hits_to_run(const std::vector<std::string>& query_ids, const HitLists& hits,
                    const std::function<std::string(int64_t)>& doc_id, int64_t depth) {
  RAGMIG_CHECK(hits.size() == query_ids.size());
  TrecRun run;
  for (size_t q = 0; q < query_ids.size(); ++q) {
    auto& list = run[query_ids[q]];
    for (size_t j = 0; j < hits[q].size() && static_cast<int64_t>(j) < depth; ++j)
      list.push_back(ScoredDoc{doc_id(hits[q][j].doc), hits[q][j].score});
  }
  return run;
}

std::vector<index::FusionSpec> fusion_grid() {
  std::vector<index::FusionSpec> grid;
  for (int a = 0; a <= 10; ++a) grid.push_back({index::FusionKind::kLinear, 60, a / 10.0});
  for (double k : {5.0, 10.0, 20.0, 40.0, 60.0, 100.0}) grid.push_back({index::FusionKind::kRrf, k, 0.5});
  return grid;
}

index::FusionSpec default_fusion() { return {index::FusionKind::kLinear, 60, 0.5}; }

size_t pick_with_prior(const std::vector<std::vector<double>>& scores, size_t prior, const std::vector<size_t>& floor) {
  RAGMIG_CHECK(!scores.empty());
  std::vector<double> mean(scores.size(), 0.0);
  for (size_t c = 0; c < scores.size(); ++c) {
    for (double x : scores[c]) mean[c] += x;
    if (!scores[c].empty()) mean[c] /= static_cast<double>(scores[c].size());
  }
  const size_t best = static_cast<size_t>(std::max_element(mean.begin(), mean.end()) - mean.begin());  // first of equals
  if (prior >= scores.size() || prior == best) return best;
  for (size_t f : floor)
    if (f < scores.size() && mean[f] > mean[prior]) return best;
  return mean[best] - mean[prior] <= standard_error_of_difference(scores[best], scores[prior]) ? prior : best;
}

Judgments carve_validation(const Judgments& validation, const Judgments& evaluated, int64_t max_queries, uint64_t seed) {
  if (max_queries < 1) throw ConfigError("the number of validation queries must be at least 1");
  std::vector<std::string> candidates;
  for (const auto& [qid, grades] : validation.by_query) {
    if (evaluated.by_query.count(qid)) continue;
    if (std::none_of(grades.begin(), grades.end(), [](const auto& g) { return g.second > 0; })) continue;
    candidates.push_back(qid);
  }
  Judgments out;
  out.source = validation.source;
  for (const auto& qid : text::carve_queries(std::move(candidates), max_queries, seed))
    out.by_query[qid] = validation.by_query.at(qid);
  return out;
}

FusionChoice choose_fusion(const std::vector<index::FusionSpec>& grid, const std::vector<std::string>& query_ids,
                           const HitLists& dense, const HitLists& sparse,
                           const std::function<std::string(int64_t)>& doc_id, const Judgments& judgments,
                           const Metric& metric, int64_t depth) {
  RAGMIG_CHECK(!grid.empty() && dense.size() == query_ids.size() && sparse.size() == query_ids.size());
  FusionChoice choice;
  choice.metric = metric.name();
  choice.queries = static_cast<int64_t>(query_ids.size());
  std::vector<std::vector<double>> scores;  // [spec][query], queries in judgments' order
  size_t prior = grid.size();
  std::vector<size_t> parts;
  for (size_t c = 0; c < grid.size(); ++c) {
    const index::FusionSpec& spec = grid[c];
    HitLists fused(query_ids.size());
    for (size_t q = 0; q < query_ids.size(); ++q) fused[q] = index::fuse(spec, dense[q], sparse[q], depth);
    const MetricReport r = evaluate_run(hits_to_run(query_ids, fused, doc_id, depth), judgments, {metric});
    choice.trials.push_back({spec, r.mean.at(0)});
    std::vector<double>& row = scores.emplace_back();
    for (const auto& [qid, values] : r.per_query) row.push_back(values.at(0));
    if (spec == default_fusion()) prior = c;
    if (spec.kind == index::FusionKind::kLinear && (spec.alpha == 0 || spec.alpha == 1)) parts.push_back(c);
  }
  const size_t picked = pick_with_prior(scores, prior, parts), best = pick_with_prior(scores, grid.size(), {});
  choice.chosen = grid[picked];
  choice.best = grid[best];
  if (prior < grid.size() && prior != best) choice.standard_error = standard_error_of_difference(scores[best], scores[prior]);
  return choice;
}

}  // namespace ragmig::eval
