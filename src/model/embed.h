// Embedding texts with a dual encoder: tokenise, sort by length so each batch pads little, encode in eval
// mode without gradients, and return the rows in input order. The one embedder that train's recall check
// and the eval module both use.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <torch/torch.h>
#include <utility>
#include <vector>

#include "model/dual_encoder.h"
#include "text/tokenizer.h"

namespace ragmig::model {

/// Pure: cuts texts of ascending `lengths` into consecutive batches [begin, end) whose padded size (rows x
/// the last, longest length) stays within `budget` tokens; a text longer than the budget is a batch alone.
std::vector<std::pair<size_t, size_t>> token_budget_batches(const std::vector<size_t>& lengths, size_t budget);

/// Pure: cuts texts of ascending `lengths` into consecutive batches [begin, end) that minimise the padded
/// tokens computed, sum of rows x longest, plus `pass_cost` tokens per batch (a forward pass's fixed cost),
/// each within `budget` padded tokens (a longer text is a batch alone). Where token_budget_batches fills every
/// batch, this one also splits a short-and-long mix that would pad the short texts to the long one's length.
std::vector<std::pair<size_t, size_t>> least_padding_batches(const std::vector<size_t>& lengths, size_t budget,
                                                             size_t pass_cost);

/// Embeds `texts` with the query tower (queries = true) or the passage tower, at most max_tokens tokens
/// each ([CLS] and [SEP] included). A forward pass holds at most batch_size x max_tokens tokens, padding
/// included: batch_size texts of the longest length, more of shorter ones (at least one text). Returns [N, D] float32 on the CPU,
/// row i for texts[i]; no texts gives an empty [0, 0] tensor. The model's training mode is restored.
/// `prompt` goes before every text (text/prompts.h), its tokens within max_tokens. `on_batch`, when given, is
/// told after each forward pass how many texts are embedded so far.
torch::Tensor embed_texts(DualEncoder& model, const text::Tokenizer& tokenizer,
                          const std::vector<std::string>& texts, bool queries, int64_t max_tokens,
                          int64_t batch_size, const torch::Device& device, std::string_view prompt = {},
                          const std::function<void(size_t done)>& on_batch = {});

}  // namespace ragmig::model
