// The retrievers of `ragmig eval` and `ragmig mine` (--retriever) and which of their options each one uses.
// Torch-free: `ragmig submit` reads a queued evaluation's command line by the same rules.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace ragmig::eval {

enum class RetrieverKind { kBm25, kDense, kHybrid, kRerank };

/// "bm25" | "dense" | "hybrid" | "rerank"; parse throws ConfigError for anything else.
std::string to_string(RetrieverKind kind);
RetrieverKind parse_retriever(const std::string& text);

/// --retriever when none is given: the model's when there is one (`ragmig eval --model M` scores M, not BM25
/// beside a model it never loads).
inline const char* default_retriever(bool with_model) { return with_model ? "dense" : "bm25"; }

/// `ragmig mine`'s refusal of a retriever it cannot mine with (rerank: its candidates are BM25's, re-scored), or
/// nullopt.
std::optional<std::string> cannot_mine(RetrieverKind kind);

/// The first option `given` says is on the command line that `kind` would ignore (--model with bm25, --fusion
/// without hybrid, --index with bm25 or rerank, ...), as the error to show: "--fusion is used by --retriever
/// hybrid, not bm25". nullopt when `kind` uses every one given. A run that silently dropped an option would be
/// mistaken for one that used it.
std::optional<std::string> unused_option(RetrieverKind kind, const std::function<bool(const std::string&)>& given);

}  // namespace ragmig::eval
