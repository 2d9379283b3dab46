// Sequences without their padding. A batch [B, L] whose rows hold fewer than L real tokens wastes the
// difference in every Linear, LayerNorm, GELU and dropout of the encoder; packed, those run on the N real
// tokens only ([N, H]), and only attention needs the rows back: as a padded [B, L, H] around the usual
// attention, or, on a GPU, directly through variable-length flash attention over the packed tokens.
#pragma once

#include <torch/torch.h>

namespace ragmig::model {

/// Where a batch's real tokens sit: mask [B, L] (1 = token) read row by row.
struct Packing {
  torch::Tensor index;       ///< [N] int64: flat positions (row * L + column) of the real tokens, in row order
  torch::Tensor cu_seqlens;  ///< [B + 1] int32: where each row's tokens start in the packed order, then N
  int64_t rows = 0, length = 0;
};

/// The packing of `mask` [B, L] (any integer or bool type; tokens need not be contiguous within a row), on the
/// mask's device.
Packing make_packing(const torch::Tensor& mask);

/// The same with its tensors on `device`. Built where the mask lies: from a mask on the host the host never waits
/// for the device (the count of real tokens is known at once; the tensors follow through pinned memory without
/// blocking), while a mask on a GPU makes the host wait for every kernel queued before (`nonzero` must read it).
Packing make_packing(const torch::Tensor& mask, const torch::Device& device);

/// The packing's tensors on `device`: from the host to a GPU through pinned memory, without waiting.
Packing packing_on(const Packing& packing, const torch::Device& device);

/// Two batches' packings as one, for a forward pass over both batches' real tokens at once: a's rows then b's, over
/// the grid [a.rows + b.rows, max(a.length, b.length)] (what `index` counts in); a's tokens first in the packed
/// order, so cu_seqlens runs on from a's into b's. Made where the packings lie, without reading them.
Packing join_packings(const Packing& a, const Packing& b);

/// x [B, L, ...] -> [N, ...]: the real tokens' rows, in row order.
torch::Tensor pack(const torch::Tensor& x, const Packing& packing);

/// x [N, ...] -> [B, L, ...]: back in place, zeros at the padding.
torch::Tensor unpack(const torch::Tensor& x, const Packing& packing);

}  // namespace ragmig::model
