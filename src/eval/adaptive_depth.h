// Query-adaptive retrieval depth: how many candidates of each list (BM25 and dense) go into fusion, per query,
// for a target recall of that candidate pool. The signal is cheap and needs no model of its own: how far the
// two retrievers agree on their top 10. Where they agree, the relevant passages sit near the top of both and
// a shallow pool holds them; where they disagree, one of them is wrong and the pool must go deeper. A rule
// maps each agreement bucket to a depth so that the mean pool recall reaches the target on validation queries
// (carved from another split, never the evaluated one) at the least mean depth it finds, never more than one
// fixed depth for all would take. Pure functions of their inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "eval/fusion_choice.h"
#include "eval/qrels.h"

namespace ragmig::eval {

/// The depths a rule chooses among, ascending.
std::vector<int64_t> depth_grid(int64_t max_depth);

/// |top 10 of a ∩ top 10 of b| by document row: 0..10.
int64_t top10_agreement(const std::vector<index::Hit>& a, const std::vector<index::Hit>& b);

/// The agreement buckets: [0, 2], [3, 5], [6, 8], [9, 10].
int64_t agreement_bucket(int64_t agreement);
inline constexpr int64_t kAgreementBuckets = 4;
/// The agreements a bucket holds, "0-2" ... "9-10".
std::string agreement_range(int64_t bucket);

/// The share of the query's relevant documents (grade > 0) among the top `depth` of either list; 1 when it has none.
double pool_recall(const std::vector<index::Hit>& dense, const std::vector<index::Hit>& sparse, int64_t depth,
                   const QueryJudgments& judged, const std::function<std::string(int64_t)>& doc_id);

struct DepthRule {
  double target = 0;
  std::vector<int64_t> depths;           ///< the grid chosen from
  std::vector<int64_t> bucket_depth;     ///< per agreement bucket
  std::vector<int64_t> bucket_queries;   ///< validation queries per bucket
  int64_t queries = 0;                   ///< validation queries in all
  std::vector<double> fixed_recall;      ///< validation: mean pool recall at each depth of the grid, for all
};

/// Fits the rule: the depths per bucket with the least mean depth (over the validation queries) that a greedy
/// allocation finds for a mean pool recall of at least `target` (starting from the shallowest depth, the bucket
/// whose next depth adds most recall per candidate goes deeper), or one depth for all when that is no deeper
/// on average: the fixed depth that meets the target, or the deepest. A bucket with fewer than `min_queries`
/// stays at that fixed depth. ConfigError when target is not in (0, 1] or there are no queries.
DepthRule fit_depth_rule(const std::vector<std::string>& query_ids, const HitLists& dense, const HitLists& sparse,
                         const Judgments& judgments, const std::function<std::string(int64_t)>& doc_id, double target,
                         const std::vector<int64_t>& depths, int64_t min_queries = 10);

/// The depth the rule gives a query whose lists are dense and sparse.
int64_t choose_depth(const DepthRule& rule, const std::vector<index::Hit>& dense, const std::vector<index::Hit>& sparse);

}  // namespace ragmig::eval
