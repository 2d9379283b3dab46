// Query-adaptive retrieval depth (see adaptive_depth.h).
#include "eval/adaptive_depth.h"

#include <algorithm>
#include <unordered_set>

#include "core/error.h"

namespace ragmig::eval {

std::vector<int64_t> depth_grid(int64_t max_depth) {
  std::vector<int64_t> out;
  for (int64_t d : {10, 20, 30, 50, 100, 200, 300, 500, 1000})
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

// Mean of recall[q][d] over `queries`, for each depth d.
std::vector<double> mean_recall(const std::vector<std::vector<double>>& recall, const std::vector<size_t>& queries,
                                size_t grid_size) {
  std::vector<double> out(grid_size, 0);
  for (size_t q : queries)
    for (size_t d = 0; d < grid_size; ++d) out[d] += recall[q][d];
  for (double& m : out) m /= static_cast<double>(std::max<size_t>(queries.size(), 1));
  return out;
}

// The first depth index whose value reaches target; the last if none.
size_t first_reaching(const std::vector<double>& mean, double target) {
  for (size_t d = 0; d < mean.size(); ++d)
    if (mean[d] >= target) return d;
  return mean.size() - 1;
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
  const size_t grid = depths.size();
  const double n = static_cast<double>(all.size());
  rule.queries = static_cast<int64_t>(all.size());
  rule.fixed_recall = mean_recall(recall, all, grid);
  const size_t fixed = first_reaching(rule.fixed_recall, target);

  // Greedy allocation: every bucket starts at the shallowest depth and, while the overall mean falls short of
  // the target, the bucket whose next depth adds the most recall per candidate taken goes one step deeper.
  // Buckets with too few queries to judge stay at the fixed depth.
  std::vector<std::vector<double>> bucket_recall;
  std::vector<size_t> at(kAgreementBuckets, 0);
  std::vector<bool> adjustable(kAgreementBuckets);
  double overall = 0;
  for (size_t b = 0; b < in_bucket.size(); ++b) {
    rule.bucket_queries.push_back(static_cast<int64_t>(in_bucket[b].size()));
    bucket_recall.push_back(mean_recall(recall, in_bucket[b], grid));
    adjustable[b] = static_cast<int64_t>(in_bucket[b].size()) >= min_queries;
    if (!adjustable[b]) at[b] = fixed;
    overall += bucket_recall[b][at[b]] * static_cast<double>(in_bucket[b].size()) / n;
  }
  while (overall < target) {
    size_t best = in_bucket.size();
    double best_gain = -1;
    for (size_t b = 0; b < in_bucket.size(); ++b) {
      if (!adjustable[b] || at[b] + 1 >= grid) continue;
      const double gain = (bucket_recall[b][at[b] + 1] - bucket_recall[b][at[b]]) /
                          static_cast<double>(depths[at[b] + 1] - depths[at[b]]);
      if (gain > best_gain) best_gain = gain, best = b;
    }
    if (best == in_bucket.size()) break;  // every bucket as deep as it goes
    overall += (bucket_recall[best][at[best] + 1] - bucket_recall[best][at[best]]) *
               static_cast<double>(in_bucket[best].size()) / n;
    ++at[best];
  }
  // Never deeper on average than the one fixed depth that meets the target (or goes deepest).
  double mean_depth = 0;
  for (size_t b = 0; b < in_bucket.size(); ++b)
    mean_depth += static_cast<double>(depths[at[b]]) * static_cast<double>(in_bucket[b].size()) / n;
  const bool use_fixed = mean_depth >= static_cast<double>(depths[fixed]);
  for (size_t b = 0; b < in_bucket.size(); ++b) rule.bucket_depth.push_back(depths[use_fixed ? fixed : at[b]]);
  return rule;
}

int64_t choose_depth(const DepthRule& rule, const std::vector<index::Hit>& dense, const std::vector<index::Hit>& sparse) {
  return rule.bucket_depth.at(static_cast<size_t>(agreement_bucket(top10_agreement(dense, sparse))));
}

}  // namespace ragmig::eval
