// Rotary position embeddings (Su et al. 2021) as Hugging Face's models compute them (ModernBERT's, Qwen3's): cos and
// sin tables of each position's angles, and queries or keys rotated by them. Shared by modernbert.h, decoder.h and gemma3.h.
#pragma once

#include <torch/torch.h>

#include "model/unpad.h"

namespace ragmig::model {

/// Rotary position tables for positions 0..L-1 and one base, float32 [L, head_dim] (HF's cos / sin: the
/// frequencies repeated over both halves).
struct RotaryTables {
  torch::Tensor cos, sin;
};
RotaryTables rotary_tables(int64_t length, int64_t head_dim, double theta, torch::Device device);

/// q or k [B, heads, L, head_dim] rotated by `tables`, in float32 and back to x's dtype (HF's apply_rotary_pos_emb).
torch::Tensor apply_rotary(const torch::Tensor& x, const RotaryTables& tables);

/// `tables` for packed tokens: row i of the result [N, 1, head_dim] is the table at the column the packing took
/// token i from, so apply_rotary on packed [N, heads, head_dim] rotates as on the padded [B, heads, L, head_dim].
RotaryTables packed_rotary_tables(const RotaryTables& tables, const Packing& packing);

}  // namespace ragmig::model
