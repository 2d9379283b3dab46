// Sliding-window attention in blocks (ModernBERT's sliding layers, modernbert.h). A token that sees only the keys
// within w = half_window positions of it needs no [L, L] score matrix: cut the positions into blocks of w, and the
// queries of block i see at most the keys of blocks i - 1, i and i + 1. Scores are then [L / w, w, 3w] — work and
// memory linear in L, where the full matrix under sliding_window_mask is quadratic (8,192 tokens: 67 M scores per
// head and layer against 1.6 M at ModernBERT's window of 128). Keys outside the window, past the ends and at the
// padding are masked with the dtype's lowest value, as sliding_window_mask masks them, so a real token's output is
// the full path's to float rounding (keys the full path masks carry zero weight there).
#pragma once

#include <torch/torch.h>

namespace ragmig::model {

/// Where blocks are worth it: rows longer than 8 blocks (the 3 blocks of keys under 3/8 of the row's). Shorter,
/// copying keys into blocks and the small products cost more than the masked keys they skip (bench_encode --family
/// modernbert at ModernBERT's window of 128 on a 2-core CPU in bf16, beside the full product: 0.77x at 256
/// tokens, 0.92x at 384, 0.87-1.02x at 512, 1.17x at 768, 1.04x at 1,024, 1.72x at 2,048).
bool local_blocks_pay(int64_t length, int64_t half_window);

/// q [B, H, L, D] -> its query blocks [B * nb, H, w, D] (nb = ceil(L / w), the end padded with zeros).
torch::Tensor query_blocks(const torch::Tensor& q, int64_t half_window);

/// k or v [B, H, L, D] -> the keys each query block sees [B * nb, H, 3w, D]: its block and one on each side.
torch::Tensor key_blocks(const torch::Tensor& x, int64_t half_window);

/// The additive mask of those blocks [B * nb, 1, w, 3w] in `dtype`: 0 where the key is a real token (mask [B, L],
/// 1 = token) within half_window of the query, the lowest finite value of `dtype` elsewhere.
torch::Tensor local_block_bias(const torch::Tensor& mask, int64_t half_window, torch::ScalarType dtype);

/// Query blocks' outputs [B * nb, H, w, D] -> [B, H, L, D] (the end's padding dropped).
torch::Tensor from_query_blocks(const torch::Tensor& x, int64_t batch, int64_t length);

}  // namespace ragmig::model
