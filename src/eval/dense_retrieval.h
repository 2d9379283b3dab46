// The dense side of an evaluation: embed the corpus and the queries with a model folder (or take them from
// the cache), then search exactly (LibTorch matmul + top-k, on CUDA when present) or through a FAISS index
// built from a spec (cached too). For an ANN index the exact search is run as well, as the reference: the
// index's recall against it and both speeds are reported beside the metrics.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "eval/encoder.h"
#include "eval/eval_cache.h"
#include "index/exact_search.h"
#include "index/matrix.h"

namespace ragmig::eval {

struct DenseSetup {
  std::string model_dir;
  std::string index_spec = "Flat";
  std::string device = "auto";
  EmbedOptions embed;
  int threads = 0;
  /// Search with the leading this many dimensions of each embedding (a Matryoshka-trained model's smaller index;
  /// leading_dimensions); 0 = all.
  int64_t dimensions = 0;
};

/// An ANN index measured against exact search on the same query embeddings.
struct AnnReport {
  std::string spec;
  int64_t k = 0;                 ///< depth both searches ran to
  double recall_at_10 = 0;       ///< mean |ANN top-10 ∩ exact top-10| / 10
  double recall_at_k = 0;        ///< the same at depth k
  double queries_per_second = 0;
  double exact_queries_per_second = 0;  ///< LibTorch exact search on `exact_device`
  std::string exact_device;
  double build_seconds = 0;      ///< 0 when the index came from the cache
};

struct DenseRetrieval {
  index::FloatMatrix doc_vectors, query_vectors;
  index::SearchResult results;  ///< top `depth` rows per query (empty when depth was 0)
  std::optional<AnnReport> ann;
  double embed_seconds = 0, index_seconds = 0, search_seconds = 0;
  std::vector<CacheUse> cache;
  std::vector<std::string> warnings;
  std::string device;
  std::string precision, precision_reason;  ///< what the embedder computed in, and why (model::choose_precision)
  text::Prompts prompts;                    ///< what went before queries and passages (the folder's or the options')
  int64_t dimensions = 0;  ///< the leading size searched (setup's, else the folder's truncate_dim); 0 = all
};

struct DenseInputs {
  std::string corpus_file, queries_file;      ///< hashed into the cache keys
  const std::vector<std::string>* passages;   ///< corpus texts (title + text), corpus order
  const std::vector<std::string>* queries;    ///< the evaluated queries' texts
  std::string query_ids_key;                  ///< identifies which queries (hash of their ids)
};

/// The first `dims` columns of every row of `m` (dims <= m.cols), renormalised to unit length when every row of
/// `m` is a unit vector (within 1e-3): a model that normalises compares by cosine, and so does its prefix, as
/// Matryoshka training compared them (train/contrastive_loss.h); a dot-product model's prefixes stay as they are.
index::FloatMatrix leading_dimensions(const index::FloatMatrix& m, int64_t dims);

/// Embeds (or loads) and searches to `depth` (0 = embed only); with setup.dimensions, else the folder's
/// truncate_dim (model/embedding_sizes.h), doc_vectors and query_vectors hold the leading dimensions only (the cache
/// keeps whole embeddings); a size the folder's Matryoshka sizes do not list gets a warning. Throws ConfigError when
/// setup.dimensions exceeds the model's. `log` receives one line per stage.
DenseRetrieval run_dense(const DenseInputs& in, int64_t depth, const DenseSetup& setup, const EvalCache& cache,
                         const std::function<void(const std::string&)>& log);

}  // namespace ragmig::eval
