// Dense ANN indexes through FAISS (1.7.3, Debian's static build), built from a DenseSpec with inner-product
// scores, trained and filled from float matrices, searched on many threads, and saved in ragmig's
// checksummed envelope. FAISS stays out of this header. Rows are numbered in the order they were added.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "index/dense_spec.h"
#include "index/exact_search.h"
#include "index/matrix.h"

namespace faiss {
struct Index;
}

namespace ragmig::index {

class DenseIndex {
 public:
  /// An empty index of `dim` dimensions. ConfigError when the spec cannot work at this dimension
  /// (PQ<m> with m not dividing dim).
  DenseIndex(const DenseSpec& spec, int64_t dim);
  ~DenseIndex();
  DenseIndex(DenseIndex&&) noexcept;
  DenseIndex& operator=(DenseIndex&&) noexcept;

  /// Trains (IVF, PQ, LSH) on `vectors` and adds them all: the usual way to make an index. ConfigError when
  /// there are too few vectors to train the spec (IVF<n> needs n, PQ needs 256).
  static DenseIndex build(const DenseSpec& spec, const FloatMatrix& vectors, int threads = 0);

  bool is_trained() const;
  void train(const FloatMatrix& vectors, int threads = 0);
  void add(const FloatMatrix& vectors, int threads = 0);

  /// Top-k rows per query with similarity scores, higher better: inner products, or for LSH the negated
  /// Hamming distance of the codes. Ties come in FAISS's order. HNSW searches with max(efSearch, k).
  SearchResult search(const FloatMatrix& queries, int64_t k, int threads = 0) const;

  /// Changes the search-time parameters (efSearch, nprobe) to those of `spec`, which must describe the
  /// same index (ConfigError otherwise): lets one built index be measured at several settings.
  void set_search_parameters(const DenseSpec& spec);

  /// Versioned, checksummed, written atomically (IoError on failure).
  void save(const std::string& path) const;
  /// DataError naming the path for a foreign, newer, truncated or corrupt file.
  static DenseIndex load(const std::string& path);

  const DenseSpec& spec() const { return spec_; }
  int64_t dim() const { return dim_; }
  int64_t size() const;

 private:
  DenseIndex() = default;
  void apply_search_parameters();

  DenseSpec spec_;
  int64_t dim_ = 0;
  std::unique_ptr<faiss::Index> index_;
};

}  // namespace ragmig::index
