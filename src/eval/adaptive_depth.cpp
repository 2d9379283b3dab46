// Query-adaptive retrieval depth (see adaptive_depth.h).
#include "eval/adaptive_depth.h"

#include <algorithm>
#include <unordered_set>

#include "core/error.h"

namespace ragmig::eval {

std::vector<int64_t> depth_grid(int64_t max_depth) {
  std::vector<int64_t> out;
  for (int64_t d : {10, 20, 50, 100, 200, 500, 1000})
    if (d < max_depth) out.push_back(d);
  out.push_back(std::max<int64_t>(max_depth, 1));
  return out;
}

int64_t top10_agreement(const std::vector<index::Hit>& a, const std::vector<index::Hit>& b) {
  std::unordered_set<int64_t> top;
  for (size_t i = 0; i < a.size() && i < 10; ++i) top.insert(a[i].doc);
  int64_t shared = 0;
  for (size_t i = 0; i < b.size() && i < 10; ++i) shared += top.count(b[i].doc) > 0;
  return shared;
}

int64_t agreement_bucket(int64_t agreement) { return std::clamp<int64_t>(agreement / 3, 0, kAgreementBuckets - 1); }

std::string agreement_range(int64_t bucket) {
  return std::to_string(3 * bucket) + "-" + std::to_string(bucket == kAgreementBuckets - 1 ? 10 : 3 * bucket + 2);
}

double pool_recall(const std::vector<index::Hit>& dense, const std::vector<index::Hit>& sparse, int64_t depth,
                   const QueryJudgments& judged, const std::function<std::string(int64_t)>& doc_id) {
  int64_t relevant = 0;
  for (const auto& [doc, grade] : judged) relevant += grade > 0;
  if (relevant == 0) return 1;
  std::unordered_set<std::string> found;
  for (const auto* list : {&dense, &sparse})
    for (size_t i = 0; i < list->size() && static_cast<int64_t>(i) < depth; ++i) {
      const std::string id = doc_id((*list)[i].doc);
      if (const auto it = judged.find(id); it != judged.end() && it->second > 0) found.insert(id);
    }
  return static_cast<double>(found.size()) / static_cast<double>(relevant);
}

namespace {

// The first depth (index into the grid) whose mean of recall[q][d] over `queries` reaches target; the last if none.
size_t smallest_meeting(const std::vector<std::vector<double>>& recall, const std::vector<size_t>& queries,
                        size_t grid_size, double target, std::vector<double>* means = nullptr) {
  size_t chosen = grid_size - 1;
  bool met = false;
  for (size_t d = 0; d < grid_size; ++d) {
    double sum = 0;
    for (size_t q : queries) sum += recall[q][d];
    const double mean = sum / static_cast<double>(std::max<size_t>(queries.size(), 1));
    if (means) means->push_back(mean);
    if (!met && mean >= target) chosen = d, met = true;
  }
  return chosen;
}

}  // namespace

DepthRule fit_depth_rule(const std::vector<std::string>& query_ids, const HitLists& dense, const HitLists& sparse,
                         const Judgments& judgments, const std::function<std::string(int64_t)>& doc_id, double target,
                         const std::vector<int64_t>& depths, int64_t min_queries) {
  if (!(target > 0 && target <= 1)) throw ConfigError("target recall must be in (0, 1], got " + std::to_string(target));
  RAGMIG_CHECK(!depths.empty() && dense.size() == query_ids.size() && sparse.size() == query_ids.size());
  DepthRule rule;
  rule.target = target;
  rule.depths = depths;
  std::vector<std::vector<double>> recall;   // [validation query][depth]
  std::vector<std::vector<size_t>> in_bucket(kAgreementBuckets);
  std::vector<size_t> all;
  for (size_t q = 0; q < query_ids.size(); ++q) {
    const auto it = judgments.by_query.find(query_ids[q]);
    if (it == judgments.by_query.end()) continue;
    std::vector<double> r;
    for (int64_t d : depths) r.push_back(pool_recall(dense[q], sparse[q], d, it->second, doc_id));
    in_bucket[static_cast<size_t>(agreement_bucket(top10_agreement(dense[q], sparse[q])))].push_back(recall.size());
    all.push_back(recall.size());
    recall.push_back(std::move(r));
  }
  if (all.empty()) throw ConfigError("no judged validation query to fit the retrieval depth on");
  rule.queries = static_cast<int64_t>(all.size());
  const size_t overall = smallest_meeting(recall, all, depths.size(), target, &rule.fixed_recall);
  for (const auto& members : in_bucket) {
    rule.bucket_queries.push_back(static_cast<int64_t>(members.size()));
    const size_t d = static_cast<int64_t>(members.size()) < min_queries
                         ? overall
                         : smallest_meeting(recall, members, depths.size(), target);
    rule.bucket_depth.push_back(depths[d]);
  }
  return rule;
}

int64_t choose_depth(const DepthRule& rule, const std::vector<index::Hit>& dense, const std::vector<index::Hit>& sparse) {
  return rule.bucket_depth.at(static_cast<size_t>(agreement_bucket(top10_agreement(dense, sparse))));
}

}  // namespace ragmig::eval
