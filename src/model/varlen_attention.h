// Attention over packed tokens (unpad.h) without padding them back: LibTorch's variable-length flash attention on
// a GPU, each row's tokens attending only to their own row's (cu_seqlens), optionally within a window of
// positions each side (ModernBERT's sliding layers). Where it cannot run (CPU, fp32, head sizes flash does not
// take, a LibTorch without it or without windows), callers pad around their usual attention instead.
#pragma once

#include <optional>

#include <torch/torch.h>

#include "model/unpad.h"

namespace ragmig::model {

/// q, k, v packed [N, heads, head_dim] -> context [N, heads, head_dim], or an undefined tensor where flash
/// attention cannot take them. `half_window`: keys more than that many packed positions away are not seen (the
/// row's tokens are consecutive in the packing, so for right- or left-padded rows these are column distances).
/// The first failure on a device (no kernel for this GPU or build) is reported once on stderr; later calls return
/// undefined at once.
torch::Tensor varlen_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const Packing& packing, double dropout,
                               std::optional<int64_t> half_window = std::nullopt);

/// Whether packed attention on a GPU runs as variable-length flash attention over the packed tokens (no padding
/// computed at all): true where LibTorch has it and its first use on this process's GPU worked; else packed
/// attention pads around the usual kernel (false until it has been tried).
bool varlen_attention_used();

}  // namespace ragmig::model
