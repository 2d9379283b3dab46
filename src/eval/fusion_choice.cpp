// Fusion chosen on validation queries (see fusion_choice.h).
#include "eval/fusion_choice.h"

#include <algorithm>

#include "core/error.h"
#include "core/splitmix.h"

namespace ragmig::eval {

std::vector<index::FusionSpec> fusion_grid() {
  std::vector<index::FusionSpec> grid;
  for (int a = 0; a <= 10; ++a) grid.push_back({index::FusionKind::kLinear, 60, a / 10.0});
  for (double k : {5.0, 10.0, 20.0, 40.0, 60.0, 100.0}) grid.push_back({index::FusionKind::kRrf, k, 0.5});
  return grid;
}

Judgments carve_validation(const Judgments& validation, const Judgments& evaluated, int64_t max_queries, uint64_t seed) {
  if (max_queries < 1) throw ConfigError("the number of validation queries must be at least 1");
  std::vector<std::pair<uint64_t, std::string>> keyed;
  for (const auto& [qid, grades] : validation.by_query) {
    if (evaluated.by_query.count(qid)) continue;
    if (std::none_of(grades.begin(), grades.end(), [](const auto& g) { return g.second > 0; })) continue;
    uint64_t h = seed;
    for (const char c : qid) h = splitmix64(h ^ static_cast<unsigned char>(c));
    keyed.emplace_back(h, qid);
  }
  std::sort(keyed.begin(), keyed.end());
  if (static_cast<int64_t>(keyed.size()) > max_queries) keyed.resize(static_cast<size_t>(max_queries));
  Judgments out;
  out.source = validation.source;
  for (const auto& [h, qid] : keyed) out.by_query[qid] = validation.by_query.at(qid);
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
    TrecRun run;
    for (size_t q = 0; q < query_ids.size(); ++q) {
      auto& list = run[query_ids[q]];
      for (const index::Hit& h : index::fuse(spec, dense[q], sparse[q], depth)) list.push_back({doc_id(h.doc), h.score});
    }
    const double score = evaluate_run(run, judgments, {metric}).mean.at(0);
    choice.trials.push_back({spec, score});
    if (score > best) best = score, choice.chosen = spec;
  }
  return choice;
}

}  // namespace ragmig::eval
