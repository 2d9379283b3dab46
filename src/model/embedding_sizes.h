// The sizes a model folder's embeddings are meant to be used at, read without loading its weights:
// sentence-transformers' truncate_dim (config_sentence_transformers.json: what its encode() returns unless told
// otherwise; `ragmig eval`, `ragmig mine` and `ragmig serve` default to it as well) and the Matryoshka sizes ragmig
// trained it for (ragmig.json's "matryoshka_dims", from train.matryoshka_dims: `ragmig serve` answers OpenAI's
// `dimensions` at those sizes without --matryoshka). Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ragmig::model {

struct EmbeddingSizes {
  int64_t truncate_dim = 0;              ///< the default size; 0 = the whole embedding
  std::vector<int64_t> matryoshka_dims;  ///< the sizes the training loss covered, as configured; {} = none recorded

  bool operator==(const EmbeddingSizes&) const = default;
};

/// The size embeddings of `full` dimensions are used at unless asked otherwise: truncate_dim when it is below
/// `full`, else `full` (sentence-transformers cuts nothing past the end either).
int64_t default_size(const EmbeddingSizes& sizes, int64_t full);

/// The sizes the folder vouches for: `full`, truncate_dim and the Matryoshka sizes, those up to `full`, largest
/// first, each once.
std::vector<int64_t> trained_sizes(const EmbeddingSizes& sizes, int64_t full);

/// ragmig.json's "matryoshka_dims" in folder `dir`: {} when there is no ragmig.json or it has none. Throws
/// DataError naming the file and key for a value that is not an array of distinct positive integers.
std::vector<int64_t> read_matryoshka_dims(const std::string& dir);

/// Throws DataError naming `dir`'s ragmig.json and its "matryoshka_dims" for a size past a model's `full`
/// embedding dimensions: the record does not belong to those weights.
void check_matryoshka_dims(const std::vector<int64_t>& dims, int64_t full, const std::string& dir);

}  // namespace ragmig::model
