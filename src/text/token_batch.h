// A padded, row-major batch of token id sequences with its attention mask: the hand-off from the text
// module to the encoder, kept free of tensor types so that text stays torch-free.
#pragma once

#include <cstdint>
#include <vector>

namespace ragmig::text {

struct TokenBatch {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> ids;   ///< rows x cols, row-major
  std::vector<int64_t> mask;  ///< 1 for tokens, 0 for padding
};

/// Pads every sequence with pad_id to the longest one (at least one column: empty sequences give a row of padding).
/// No sequences gives rows = cols = 0.
TokenBatch make_token_batch(const std::vector<std::vector<int32_t>>& seqs, int32_t pad_id);

}  // namespace ragmig::text
