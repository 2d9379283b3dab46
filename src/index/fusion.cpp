// Rank fusion (see fusion.h). Scores are accumulated in double and only rounded to float at the end, so the
// order of the lists does not change the result.
#include "index/fusion.h"

#include <algorithm>
#include <unordered_map>

#include "core/error.h"

namespace ragmig::index {
namespace {

std::vector<Hit> ranked(const std::unordered_map<int64_t, double>& scores, int64_t depth) {
  std::vector<std::pair<int64_t, double>> all(scores.begin(), scores.end());
  auto before = [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; };
  const auto n = static_cast<int64_t>(all.size());
  const int64_t keep = std::max<int64_t>(0, std::min(depth, n));
  std::partial_sort(all.begin(), all.begin() + keep, all.end(), before);
  std::vector<Hit> out;
  out.reserve(static_cast<size_t>(keep));
  for (int64_t i = 0; i < keep; ++i) out.push_back(Hit{all[static_cast<size_t>(i)].first, static_cast<float>(all[static_cast<size_t>(i)].second)});
  return out;
}

}  // namespace

std::vector<Hit> fuse_rrf(const std::vector<std::vector<Hit>>& lists, double k, int64_t depth) {
  std::unordered_map<int64_t, double> scores;
  for (const auto& list : lists)
    for (size_t r = 0; r < list.size(); ++r) scores[list[r].doc] += 1.0 / (k + static_cast<double>(r + 1));
  return ranked(scores, depth);
}

std::vector<Hit> fuse_linear(const std::vector<std::vector<Hit>>& lists, const std::vector<double>& weights, int64_t depth) {
  RAGMIG_CHECK(lists.size() == weights.size(), "one weight per list");
  std::unordered_map<int64_t, double> scores;
  for (size_t l = 0; l < lists.size(); ++l) {
    if (lists[l].empty() || weights[l] == 0) continue;  // weighted 0: not fused at all, not even as ties at 0
    auto [lo, hi] = std::minmax_element(lists[l].begin(), lists[l].end(), [](const Hit& a, const Hit& b) { return a.score < b.score; });
    const double min = lo->score, range = static_cast<double>(hi->score) - min;
    for (const Hit& h : lists[l]) {
      // A list whose scores are all equal says nothing about order: every document of it gets the full weight.
      const double norm = range > 0 ? (h.score - min) / range : 1.0;
      scores[h.doc] += weights[l] * norm;
    }
  }
  return ranked(scores, depth);
}

std::vector<Hit> fuse(const FusionSpec& spec, const std::vector<Hit>& first, const std::vector<Hit>& second, int64_t depth) {
  if (spec.kind == FusionKind::kRrf) return fuse_rrf({first, second}, spec.rrf_k, depth);
  return fuse_linear({first, second}, {spec.alpha, 1.0 - spec.alpha}, depth);
}

}  // namespace ragmig::index
