// Dense retrieval for evaluation (see dense_retrieval.h).
#include "eval/dense_retrieval.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/error.h"
#include "eval/torch_search.h"
#include "index/dense_index.h"
#include "index/dense_spec.h"
#include "model/embedding_sizes.h"
#include "model/lora.h"
#include "model/model_folder.h"
#include "model/packaged_models.h"
#include "model/precision.h"

namespace ragmig::eval {
namespace {

// Bump when what the embedder produces for the same model and text changes (tokenisation, pooling, text join).
// v2: the folder's tokenizer files decide lower-casing, accents, CJK and the length limit; ST pooling.
constexpr const char* kEmbeddingVersion = "embed-v2";
// How often embedding says how far it got: well within the monitor's stall limit for a job that has not reported
// yet (monitor::AlertThresholds::start_timeout_s, 15 min).
constexpr std::chrono::seconds kProgressEvery{60};

}  // namespace

index::FloatMatrix leading_dimensions(const index::FloatMatrix& m, int64_t dims) {
  bool unit = true;
  for (int64_t r = 0; r < m.rows && unit; ++r) {
    double norm = 0;
    for (int64_t c = 0; c < m.cols; ++c) norm += static_cast<double>(m.row(r)[c]) * m.row(r)[c];
    unit = std::abs(std::sqrt(norm) - 1.0) < 1e-3;
  }
  index::FloatMatrix out(m.rows, dims);
  for (int64_t r = 0; r < m.rows; ++r) {
    double norm = 0;
    for (int64_t c = 0; c < dims; ++c) norm += static_cast<double>(m.row(r)[c]) * m.row(r)[c];
    const double scale = unit ? 1.0 / std::max(std::sqrt(norm), 1e-12) : 1.0;
    for (int64_t c = 0; c < dims; ++c) out.row(r)[c] = static_cast<float>(m.row(r)[c] * scale);
  }
  return out;
}

namespace {

using Log = std::function<void(const std::string&)>;

// Embeds the passages and the queries into out.doc_vectors / out.query_vectors, each from the cache where it holds
// them (the model is loaded only when something must be embedded); sets out's device, precision and prompts.
// Returns the passages' cache key, which an ANN index's key builds on.
std::string embed_inputs(const DenseInputs& in, const DenseSetup& setup, const EvalCache& cache, const Log& log,
                         DenseRetrieval& out) {
  std::optional<Encoder> encoder;
  auto get_encoder = [&]() -> Encoder& {
    if (!encoder) {
      log("loading model " + setup.model_dir + " (" + out.device + ", " + out.precision_reason + ")");
      encoder.emplace(setup.model_dir, setup.device, setup.embed);
    }
    return *encoder;
  };
  out.device = resolve_device(setup.device);
  const model::PrecisionChoice precision =
      model::choose_precision(setup.embed.precision, out.device != "cpu", model::cpu_bf16(), "--precision");
  out.precision = model::to_string(precision.precision);
  out.precision_reason = precision.reason;
  out.prompts =
      text::replaced(model::folder_prompts(setup.model_dir), setup.embed.query_prompt, setup.embed.passage_prompt);
  if (out.prompts != text::Prompts{})
    log(fmt::format("prompts: {} before queries, {} before passages", nlohmann::json(out.prompts.query).dump(),
                    nlohmann::json(out.prompts.passage).dump()));
  // fp32 keys are those of before precision was a choice; bf16 embeddings are cached apart.
  const std::string precision_key = precision.precision == model::Precision::Fp32 ? "" : "-" + out.precision;
  // Keys use the requested token limits; the model's cap is a function of the model, which is hashed too.
  std::string model_key = cache.enabled() ? hash_folder(setup.model_dir) : "";
  // A LoRA adapter folder embeds with its base model's weights too: both are hashed.
  if (cache.enabled() && model::is_adapter_folder(setup.model_dir))
    model_key = hash_parts({model_key, hash_folder(model::resolve_model_reference(model::adapter_base(setup.model_dir)))});
  // The folder's own prompts are in its hash; a prompt given on the command line is keyed apart.
  const auto with_prompt = [](std::vector<std::string> parts, const std::optional<std::string>& prompt) {
    if (prompt) parts.push_back("prompt:" + *prompt);
    return parts;
  };
  auto embed_cached = [&](const std::string& what, const std::vector<std::string>& texts, bool queries,
                          const std::string& key) -> index::FloatMatrix {
    const std::string path = cache.enabled() ? cache.path(what, key, ".emb") : "";
    if (auto m = cache.load_matrix(path, out.warnings); m && m->rows == static_cast<int64_t>(texts.size())) {
      out.cache.push_back({what, "hit", path});
      return std::move(*m);
    }
    Encoder& embedder = get_encoder();  // "loading model" comes before what it embeds
    log("embedding " + std::to_string(texts.size()) + " " + what);
    // A line at least every kProgressEvery while it embeds: a big corpus takes hours, and a scheduler running
    // this as a job hears from it (`ragmig eval` writes each line to the job's events.jsonl).
    auto said = std::chrono::steady_clock::now();
    const auto on_batch = [&](size_t done) {
      if (done == texts.size() || std::chrono::steady_clock::now() - said < kProgressEvery) return;
      said = std::chrono::steady_clock::now();
      log(fmt::format("embedded {} of {} {}", done, texts.size(), what));
    };
    index::FloatMatrix m = embedder.embed(texts, queries, on_batch);
    out.cache.push_back({what, cache.store_matrix(path, m, out.warnings), path});
    return m;
  };
  const std::string passages_key =
      cache.enabled() ? hash_parts(with_prompt({kEmbeddingVersion, model_key, hash_file(in.corpus_file),
                                                std::to_string(setup.embed.max_passage_tokens) + precision_key},
                                               setup.embed.passage_prompt))
                      : "";
  out.doc_vectors = embed_cached("passages", *in.passages, false, passages_key);
  const std::string queries_key =
      cache.enabled() ? hash_parts(with_prompt({kEmbeddingVersion, model_key, hash_file(in.queries_file),
                                                in.query_ids_key,
                                                std::to_string(setup.embed.max_query_tokens) + precision_key},
                                               setup.embed.query_prompt))
                      : "";
  out.query_vectors = embed_cached("queries", *in.queries, true, queries_key);
  return passages_key;
}

// Cuts both sides' vectors to --dimensions, or without it to the folder's truncate_dim; a size the model was not
// trained for (ragmig.json's matryoshka_dims) is warned about.
void truncate_dimensions(const DenseSetup& setup, const Log& log, DenseRetrieval& out) {
  const int64_t full = out.doc_vectors.cols;
  if (setup.dimensions > full)
    throw ConfigError(
        fmt::format("--dimensions {}: the model's embeddings have {} dimensions", setup.dimensions, full));
  const model::EmbeddingSizes sizes = model::folder_embedding_sizes(setup.model_dir);
  out.dimensions = setup.dimensions;
  if (out.dimensions == 0 && model::default_size(sizes, full) < full) {
    out.dimensions = model::default_size(sizes, full);
    log(fmt::format("dimensions: {} of {}, the folder's truncate_dim (what sentence-transformers' encode gives; "
                    "--dimensions {} for all)", out.dimensions, full, full));
  }
  if (const auto trained = model::trained_sizes(sizes, full);
      setup.dimensions > 0 && !sizes.matryoshka_dims.empty() &&
      std::find(trained.begin(), trained.end(), setup.dimensions) == trained.end())
    out.warnings.push_back(fmt::format("--dimensions {}: the model was trained for {} dimensions (ragmig.json's "
                                       "matryoshka_dims), not this size", setup.dimensions, fmt::join(trained, ", ")));
  if (out.dimensions > 0) {
    out.doc_vectors = leading_dimensions(out.doc_vectors, out.dimensions);
    out.query_vectors = leading_dimensions(out.query_vectors, out.dimensions);
  }
}

// Searches an approximate index (loaded from the cache, else built and cached) and reports its recall against the
// exact search's results, `exact`, which took `exact_seconds`.
void search_ann(const index::DenseSpec& spec, const std::string& passages_key, const index::SearchResult& exact,
                double exact_seconds, int64_t depth, const DenseSetup& setup, const EvalCache& cache, const Log& log,
                DenseRetrieval& out) {
  // Build parameters go into the key; search parameters (efSearch, nprobe) are applied after loading.
  index::DenseSpec build_spec = spec;
  build_spec.ef_search = 0;
  build_spec.nprobe = 0;
  std::vector<std::string> index_key = {passages_key, index::to_string(build_spec)};
  if (out.dimensions > 0) index_key.push_back("dimensions:" + std::to_string(out.dimensions));
  const std::string index_path =
      cache.enabled() ? cache.path("index", hash_parts(index_key) + "-" + file_safe(spec.factory()), ".faiss")
                      : "";
  const auto t_index = std::chrono::steady_clock::now();
  std::optional<index::DenseIndex> ann;
  if (cache.enabled() && std::filesystem::exists(index_path)) {
    try {
      ann.emplace(index::DenseIndex::load(index_path));
      if (ann->size() != out.doc_vectors.rows || ann->dim() != out.doc_vectors.cols) ann.reset();
    } catch (const Error& e) {
      out.warnings.push_back(std::string("ignoring a damaged cache entry, rebuilding it: ") + e.what());
    }
  }
  AnnReport report;
  report.spec = index::to_string(spec);
  if (ann) {
    ann->set_search_parameters(spec);
    out.cache.push_back({"index", "hit", index_path});
  } else {
    log("building " + report.spec + " over " + std::to_string(out.doc_vectors.rows) + " vectors");
    ann.emplace(index::DenseIndex::build(spec, out.doc_vectors, setup.threads));
    report.build_seconds = seconds_since(t_index);
    out.cache.push_back({"index", cache.store(index_path, [&] { ann->save(index_path); }, out.warnings), index_path});
  }
  out.index_seconds = seconds_since(t_index);
  const auto t_ann = std::chrono::steady_clock::now();
  out.results = ann->search(out.query_vectors, depth, setup.threads);
  out.search_seconds = seconds_since(t_ann);
  const auto q = static_cast<double>(out.query_vectors.rows);
  report.k = depth;
  report.recall_at_10 = index::recall_against(out.results, exact, 10);
  report.recall_at_k = index::recall_against(out.results, exact, depth);
  report.queries_per_second = out.search_seconds > 0 ? q / out.search_seconds : 0;
  report.exact_queries_per_second = exact_seconds > 0 ? q / exact_seconds : 0;
  report.exact_device = out.device;
  out.ann = report;
}

}  // namespace

DenseRetrieval run_dense(const DenseInputs& in, int64_t depth, const DenseSetup& setup, const EvalCache& cache,
                         const std::function<void(const std::string&)>& log) {
  DenseRetrieval out;
  const index::DenseSpec spec = index::parse_dense_spec(setup.index_spec);
  const auto t_embed = std::chrono::steady_clock::now();
  const std::string passages_key = embed_inputs(in, setup, cache, log, out);
  truncate_dimensions(setup, log, out);
  out.embed_seconds = seconds_since(t_embed);
  if (depth <= 0) return out;

  TorchSearchOptions exact_options;
  exact_options.device = out.device;
  const auto t_exact = std::chrono::steady_clock::now();
  index::SearchResult exact = torch_exact_search(out.query_vectors, out.doc_vectors, depth, exact_options);
  const double exact_seconds = seconds_since(t_exact);
  if (spec.is_exact()) {
    out.results = std::move(exact);
    out.search_seconds = exact_seconds;
  } else {
    search_ann(spec, passages_key, exact, exact_seconds, depth, setup, cache, log, out);
  }
  return out;
}

}  // namespace ragmig::eval
