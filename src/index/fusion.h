// Fusion of ranked lists (BM25 and dense) into one: reciprocal-rank fusion, score(d) = sum over lists of
// 1 / (k + rank(d)) with ranks from 1 (Cormack et al. 2009, k = 60), and normalised linear fusion,
// score(d) = sum of weight_i * (s_i(d) - min_i) / (max_i - min_i), min-max taken over each list's own
// results and a document missing from a list contributing 0 for it; a list weighted 0 adds no documents, so
// Linear(alpha=0) is the second list's ranking alone and alpha=1 the first's. Pure functions of their inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "index/bm25_index.h"
#include "index/fusion_spec.h"

namespace ragmig::index {

/// Each list is one query's hits in rank order (its first hit has rank 1). Returns the fused top `depth`,
/// score descending and row ascending on ties. RRF ignores the scores; Linear ignores the order.
std::vector<Hit> fuse_rrf(const std::vector<std::vector<Hit>>& lists, double k, int64_t depth);
std::vector<Hit> fuse_linear(const std::vector<std::vector<Hit>>& lists, const std::vector<double>& weights, int64_t depth);
/// Dispatches on the spec with two lists (first, second).
std::vector<Hit> fuse(const FusionSpec& spec, const std::vector<Hit>& first, const std::vector<Hit>& second, int64_t depth);

}  // namespace ragmig::index
