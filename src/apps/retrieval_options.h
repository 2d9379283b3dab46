// The retrieval options `ragmig eval` and `ragmig mine` share (both run eval::evaluate): cache, threads,
// device, precision and length limits on the command line, and the one preparation of the parsed options.
#pragma once

#include <CLI/CLI.hpp>

#include "eval/evaluate.h"

namespace ragmig::apps {

/// Adds --cache, --no-cache, --threads, --device, --precision, --max-query-tokens and --max-passage-tokens.
void add_retrieval_options(CLI::App* sub, eval::EvalOptions& o, bool& no_cache);

/// --retriever's kind: as given (eval::parse_retriever), else dense where --model names a model and bm25 where none
/// does: `ragmig eval --model M` scores M, not BM25 beside a model it never loads.
eval::RetrieverKind retriever_kind(const std::string& given, const eval::EvalOptions& o);

/// Throws ConfigError for an option given on `sub`'s command line that `kind` would ignore (--model with bm25,
/// --fusion without hybrid, --index with bm25 or rerank, ...): a run that silently dropped it would be mistaken
/// for one that used it.
void refuse_unused_options(const CLI::App& sub, eval::RetrieverKind kind);

/// Applies --no-cache, checks --threads, resolves a package:NAME model and sets LibTorch's threads.
/// ConfigError for a bad value.
void prepare_retrieval(eval::EvalOptions& o, bool no_cache);

}  // namespace ragmig::apps
