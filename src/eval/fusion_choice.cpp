// Fusion chosen on validation queries (see fusion_choice.h).
#include "eval/fusion_choice.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "text/query_holdout.h"

namespace ragmig::eval {

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
  double best = -1;
  for (const auto& spec : grid) {
    HitLists fused(query_ids.size());
    for (size_t q = 0; q < query_ids.size(); ++q) fused[q] = index::fuse(spec, dense[q], sparse[q], depth);
    const double score = evaluate_run(hits_to_run(query_ids, fused, doc_id, depth), judgments, {metric}).mean.at(0);
    choice.trials.push_back({spec, score});
    if (score > best) best = score, choice.chosen = spec;
  }
  return choice;
}

}  // namespace ragmig::eval
