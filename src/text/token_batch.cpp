// make_token_batch: padding to the longest sequence of the batch (not to max_len), which is what keeps
// short-query batches cheap.
#include "text/token_batch.h"

#include <algorithm>

namespace ragmig::text {

TokenBatch make_token_batch(const std::vector<std::vector<int32_t>>& seqs, int32_t pad_id) {
  TokenBatch batch;
  batch.rows = static_cast<int64_t>(seqs.size());
  // At least one column: texts that all encode to nothing (a tokenizer that adds no special token, given empty
  // texts) still make a batch, of padding only, which pools to zeros as transformers' padded rows do.
  batch.cols = seqs.empty() ? 0 : 1;
  for (const auto& s : seqs) batch.cols = std::max(batch.cols, static_cast<int64_t>(s.size()));
  const size_t cells = static_cast<size_t>(batch.rows * batch.cols);
  batch.ids.assign(cells, pad_id);
  batch.mask.assign(cells, 0);
  for (size_t r = 0; r < seqs.size(); ++r) {
    const size_t base = r * static_cast<size_t>(batch.cols);
    for (size_t c = 0; c < seqs[r].size(); ++c) {
      batch.ids[base + c] = seqs[r][c];
      batch.mask[base + c] = 1;
    }
  }
  return batch;
}

}  // namespace ragmig::text
