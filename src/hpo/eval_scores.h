// What a sweep takes from the JSON that `ragmig eval --out` wrote for a trial or a baseline: the sweep's
// metric for the retriever alone and, for a hybrid evaluation, fused with BM25 and which fusion was used.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ragmig::hpo {

struct EvalScores {
  double alone = 0;               ///< the evaluated retriever by itself (a hybrid's "dense" part)
  std::optional<double> hybrid;   ///< fused with BM25 (hybrid evaluations only)
  std::string fusion;             ///< the fusion that gave `hybrid` ("Linear(alpha=0.3)"); "" without one
};

/// Reads `metric` ("ndcg@10") from one evaluation result. For `"retriever": "hybrid"` the fused value is
/// `hybrid` and `parts.dense` the model alone. Anything missing or not a number: a DataError naming `path`
/// and the key that was expected.
EvalScores eval_scores(const nlohmann::json& result, const std::string& metric, const std::string& path);

}  // namespace ragmig::hpo
