// Dense index specs: FAISS factory strings (inner product) with optional search and build parameters in
// ragmig's spec syntax. Accepted: `Flat`, `HNSW<M>`, `IVF<n>,Flat`, `IVF<n>,PQ<m>`, `PQ<m>`, `LSH`,
// `LSH<bits>`, then optionally `(efSearch=..,efConstruction=..)` for HNSW or `(nprobe=..)` for IVF, e.g.
// `HNSW32(efSearch=128)`, `IVF1024,PQ32(nprobe=32)`. Parameters not written take the defaults below.
#pragma once

#include <cstdint>
#include <string>

namespace ragmig::index {

enum class DenseKind { kFlat, kHnsw, kIvfFlat, kIvfPq, kPq, kLsh };

/// Defaults when the spec does not set them. FAISS's own efSearch of 16 gave HNSW32 a recall@10 of only
/// 0.68 against exact search on SQuAD embeddings (128 gave 0.975, at 1.5k q/s on 2 cores); efConstruction
/// stays FAISS's 40. A search for k results always uses efSearch >= k, as hnswlib does (FAISS 1.7.3 does
/// not). FAISS's nprobe of 1 is as poor for IVF, so ragmig probes 1/16 of the lists (at least 8).
inline constexpr int64_t kDefaultEfSearch = 128;
inline constexpr int64_t kDefaultEfConstruction = 40;
int64_t default_nprobe(int64_t nlist);

struct DenseSpec {
  DenseKind kind = DenseKind::kFlat;
  int64_t hnsw_m = 0;    ///< HNSW<M>: graph degree
  int64_t nlist = 0;     ///< IVF<n>: inverted lists
  int64_t pq_m = 0;      ///< PQ<m>: sub-quantizers of 8 bits each (m must divide the dimension)
  int64_t lsh_bits = 0;  ///< LSH<bits>; 0 = as many bits as dimensions (FAISS's "LSH")
  // Written parameters; 0 = not written (the default applies and to_string leaves it out).
  int64_t ef_search = 0;
  int64_t ef_construction = 0;
  int64_t nprobe = 0;

  bool operator==(const DenseSpec&) const = default;
  /// The FAISS index_factory string (parameters left out), e.g. "IVF1024,PQ32".
  std::string factory() const;
  bool is_exact() const { return kind == DenseKind::kFlat; }
  int64_t effective_ef_search() const { return ef_search > 0 ? ef_search : kDefaultEfSearch; }
  int64_t effective_ef_construction() const { return ef_construction > 0 ? ef_construction : kDefaultEfConstruction; }
  int64_t effective_nprobe() const { return nprobe > 0 ? nprobe : default_nprobe(nlist); }
};

/// ConfigError naming the spec for anything outside the grammar above (including parameters that do not
/// apply to the index kind).
DenseSpec parse_dense_spec(const std::string& spec);
std::string to_string(const DenseSpec& spec);

}  // namespace ragmig::index
