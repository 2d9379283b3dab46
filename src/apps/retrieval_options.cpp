// Shared retrieval options of `ragmig eval` and `ragmig mine` (see retrieval_options.h).
#include "apps/retrieval_options.h"

#include <ATen/Parallel.h>

#include "core/error.h"
#include "index/parallel.h"
#include "model/packaged_models.h"

namespace ragmig::apps {

void add_retrieval_options(CLI::App* sub, eval::EvalOptions& o, bool& no_cache) {
  sub->add_option("--cache", o.cache_dir, "cache folder for embeddings and indexes")->capture_default_str();
  sub->add_flag("--no-cache", no_cache, "neither read nor write the cache");
  sub->add_option("--threads", o.threads, "threads for BM25, FAISS and LibTorch (0 = all cores)")->capture_default_str();
  sub->add_option("--device", o.dense.device, "auto | cpu | cuda | cuda:N (embedding and exact search)")->capture_default_str();
  sub->add_option("--precision", o.dense.embed.precision,
                  "auto | fp32 | bf16: the embedder's precision (auto: bf16 on CUDA and on CPUs where it runs faster "
                  "than fp32, else fp32)")
      ->capture_default_str();
  sub->add_option("--max-query-tokens", o.dense.embed.max_query_tokens, "query token limit")->capture_default_str();
  sub->add_option("--max-passage-tokens", o.dense.embed.max_passage_tokens, "passage token limit")->capture_default_str();
  sub->add_option("--query-prompt", o.dense.embed.query_prompt,
                  "text put before every query, e.g. \"query: \" (default: the model folder's prompt, if any; "
                  "\"\" = none)");
  sub->add_option("--passage-prompt", o.dense.embed.passage_prompt,
                  "text put before every passage, e.g. \"passage: \" (default: the model folder's prompt, if any; "
                  "\"\" = none)");
}

eval::RetrieverKind retriever_kind(const std::string& given, const eval::EvalOptions& o) {
  return eval::parse_retriever(given.empty() ? eval::default_retriever(!o.dense.model_dir.empty()) : given);
}

void refuse_unused_options(const CLI::App& sub, eval::RetrieverKind kind) {
  const auto given = [&](const std::string& name) {
    const CLI::Option* option = sub.get_option_no_throw(name);
    return option && option->count() > 0;
  };
  if (const auto unused = eval::unused_option(kind, given)) throw ConfigError(*unused);
}

void prepare_retrieval(eval::EvalOptions& o, bool no_cache) {
  if (no_cache) o.cache_dir.clear();
  if (o.threads < 0) throw ConfigError("--threads must be >= 0");
  o.dense.threads = o.threads;
  if (!o.dense.model_dir.empty()) o.dense.model_dir = model::resolve_model_reference(o.dense.model_dir);
  at::set_num_threads(index::resolve_threads(o.threads));
}

}  // namespace ragmig::apps
