// Exact inner-product search with LibTorch: queries in chunks against the documents in chunks, a matmul and
// a top-k per pair, the running top-k merged across document chunks. On CUDA this is the fast exact search;
// on the CPU it runs on BLAS. Tested against index::exact_search. LibTorch stays out of this header.
#pragma once

#include <cstdint>
#include <string>

#include "index/exact_search.h"
#include "index/matrix.h"

namespace ragmig::eval {

struct TorchSearchOptions {
  std::string device = "auto";      ///< see resolve_device in eval/encoder.h
  int64_t query_chunk = 1024;       ///< queries per matmul
  int64_t doc_chunk = 1 << 18;      ///< documents per matmul (bounds device memory: chunk x chunk floats)
};

/// Top-k document rows per query by inner product, score descending (ties in LibTorch's order); k is capped
/// at the number of documents. DataError when the dimensions differ.
index::SearchResult torch_exact_search(const index::FloatMatrix& queries, const index::FloatMatrix& docs, int64_t k,
                                       const TorchSearchOptions& options = {});

}  // namespace ragmig::eval
