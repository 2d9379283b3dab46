// Rank fusion (see fusion.h). Scores are accumulated in double and only rounded to float at the end, so the
// order of the lists does not change the result.
#include "index/fusion.h"

#include <algorithm>
#include <unordered_map>

#include "core/error.h"
#include "index/spec_syntax.h"

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

FusionSpec parse_fusion_spec(const std::string& text) {
  const SpecParts parts = split_spec(text, "fusion");
  FusionSpec spec;
  if (parts.head == "RRF") {
    spec.kind = FusionKind::kRrf;
  } else if (parts.head == "Linear") {
    spec.kind = FusionKind::kLinear;
  } else {
    throw ConfigError("unknown fusion spec '" + text + "' (expected RRF(k=60) or Linear(alpha=0.5))");
  }
  for (const auto& [key, value] : parts.params) {
    if (key == "k" && spec.kind == FusionKind::kRrf) {
      spec.rrf_k = spec_number(value, key, text);
      if (spec.rrf_k < 0) throw ConfigError("spec '" + text + "': k must be >= 0");
    } else if (key == "alpha" && spec.kind == FusionKind::kLinear) {
      spec.alpha = spec_number(value, key, text);
      if (spec.alpha < 0 || spec.alpha > 1) throw ConfigError("spec '" + text + "': alpha must be in [0, 1]");
    } else {
      throw ConfigError("spec '" + text + "': unknown parameter '" + key + "' (RRF takes k, Linear takes alpha)");
    }
  }
  return spec;
}

std::string to_string(const FusionSpec& spec) {
  if (spec.kind == FusionKind::kRrf) return join_spec("RRF", {{"k", format_number(spec.rrf_k)}});
  return join_spec("Linear", {{"alpha", format_number(spec.alpha)}});
}

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
