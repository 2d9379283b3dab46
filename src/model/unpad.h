// Sequences without their padding. A batch [B, L] whose rows hold fewer than L real tokens wastes the
// difference in every Linear, LayerNorm, GELU and dropout of the encoder; packed, those run on the N real
// tokens only ([N, H]), and only attention needs the rows back: as a padded [B, L, H] around the usual
// attention, or, on a GPU, directly through variable-length flash attention over the packed tokens.
#pragma once

#include <torch/torch.h>

#include <utility>
#include <vector>

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

/// Two batches packed as one, a's tokens then b's (a forward pass over both: BertModelImpl::forward_pair): each
/// batch's packing and their join, on one device.
struct PackedPair {
  Packing a, b, joint;
};

/// The packings of masks [Ba, La] and [Bb, Lb] and their join_packings, made where the masks lie (from the host, no
/// wait for a GPU) and put on `device` (packing_on).
PackedPair make_packed_pair(const torch::Tensor& mask_a, const torch::Tensor& mask_b, const torch::Device& device);

/// pack(x_a, pair.a) then pack(x_b, pair.b), in one tensor [Na + Nb, ...].
torch::Tensor pack_pair(const torch::Tensor& x_a, const torch::Tensor& x_b, const PackedPair& pair);

/// x [Na + Nb, ...] -> unpack of a's rows [Ba, La, ...] and of b's [Bb, Lb, ...].
std::pair<torch::Tensor, torch::Tensor> unpack_pair(const torch::Tensor& x, const PackedPair& pair);

/// For a joined pass whose batches lie one after another in the packed order (`parts`, each with its `packed`):
/// fn(part, begin, tokens) for each, its tokens being rows [begin, begin + tokens); the results concatenated.
template <class Part, class Fn>
torch::Tensor cat_over_parts(const std::vector<Part>& parts, Fn&& fn) {
  std::vector<torch::Tensor> out;
  int64_t begin = 0;
  for (const Part& part : parts) {
    const int64_t tokens = part.packed->index.size(0);
    out.push_back(fn(part, begin, tokens));
    begin += tokens;
  }
  return torch::cat(out);
}

/// x [B, L, ...] -> [N, ...]: the real tokens' rows, in row order.
torch::Tensor pack(const torch::Tensor& x, const Packing& packing);

/// x [N, ...] -> [B, L, ...]: back in place, zeros at the padding.
torch::Tensor unpack(const torch::Tensor& x, const Packing& packing);

}  // namespace ragmig::model
