// The retrievers and the options each uses (see retriever_kind.h).
#include "eval/retriever_kind.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/error.h"

namespace ragmig::eval {

std::string to_string(RetrieverKind kind) {
  switch (kind) {
    case RetrieverKind::kBm25: return "bm25";
    case RetrieverKind::kDense: return "dense";
    case RetrieverKind::kHybrid: return "hybrid";
    case RetrieverKind::kRerank: return "rerank";
  }
  return "?";
}

RetrieverKind parse_retriever(const std::string& text) {
  for (RetrieverKind k : {RetrieverKind::kBm25, RetrieverKind::kDense, RetrieverKind::kHybrid, RetrieverKind::kRerank})
    if (to_string(k) == text) return k;
  throw ConfigError("unknown retriever '" + text + "' (expected bm25, dense, hybrid or rerank)");
}

std::optional<std::string> cannot_mine(RetrieverKind kind) {
  if (kind != RetrieverKind::kRerank) return std::nullopt;
  return "--retriever rerank cannot mine: use bm25, dense or hybrid";
}

std::optional<std::string> unused_option(RetrieverKind kind, const std::function<bool(const std::string&)>& given) {
  constexpr RetrieverKind kBm25 = RetrieverKind::kBm25, kDense = RetrieverKind::kDense,
                          kHybrid = RetrieverKind::kHybrid, kRerank = RetrieverKind::kRerank;
  // The options only some retrievers use, each with those that do.
  static const std::vector<std::pair<const char*, std::vector<RetrieverKind>>> used_by = {
      {"--target-recall", {kHybrid}},
      {"--model", {kDense, kHybrid, kRerank}},
      {"--dimensions", {kDense, kHybrid, kRerank}},
      {"--index", {kDense, kHybrid}},
      {"--bm25", {kBm25, kHybrid, kRerank}},
      {"--candidates", {kHybrid, kRerank}},
      {"--fusion", {kHybrid}},
      {"--fusion-validation", {kHybrid}},
      {"--fusion-validation-queries", {kHybrid}},
  };
  for (const auto& [name, kinds] : used_by) {
    if (!given(name) || std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) continue;
    std::string which;
    for (const RetrieverKind k : kinds) which += (which.empty() ? "" : ", ") + to_string(k);
    return std::string(name) + " is used by --retriever " + which + ", not " + to_string(kind);
  }
  return std::nullopt;
}

}  // namespace ragmig::eval
