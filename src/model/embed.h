// Embedding texts with a dual encoder: tokenise, sort by length so each batch pads little, encode in eval
// mode without gradients, and return the rows in input order. The one embedder that train's recall check
// and the eval module both use.
#pragma once

#include <cstdint>
#include <string>
#include <torch/torch.h>
#include <vector>

#include "model/dual_encoder.h"
#include "text/wordpiece.h"

namespace ragmig::model {

/// Embeds `texts` with the query tower (queries = true) or the passage tower, at most max_tokens tokens
/// each ([CLS] and [SEP] included), batch_size texts per forward pass. Returns [N, D] float32 on the CPU,
/// row i for texts[i]; no texts gives an empty [0, 0] tensor. The model's training mode is restored.
torch::Tensor embed_texts(DualEncoder& model, const text::WordPieceTokenizer& tokenizer,
                          const std::vector<std::string>& texts, bool queries, int64_t max_tokens,
                          int64_t batch_size, const torch::Device& device);

}  // namespace ragmig::model
