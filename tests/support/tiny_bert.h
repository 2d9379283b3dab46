// The small BERT shape the model and train tests build: two layers, a feed-forward twice the hidden size.
#pragma once

#include <cstdint>

#include "model/bert_config.h"

namespace ragmig::testing {

inline model::BertConfig tiny_bert_config(int64_t vocab, int64_t hidden, int64_t heads, int64_t max_positions) {
  model::BertConfig c;
  c.vocab_size = vocab;
  c.hidden_size = hidden;
  c.num_hidden_layers = 2;
  c.num_attention_heads = heads;
  c.intermediate_size = 2 * hidden;
  c.max_position_embeddings = max_positions;
  return c;
}

/// `c` as an MPNet config (model/bert_config.h): the relative position bias, positions from 2, no token types,
/// MPNet's padding id.
inline model::BertConfig as_mpnet(model::BertConfig c) {
  c.model_type = "mpnet";
  c.type_vocab_size = 0;
  c.pad_token_id = 1;
  return c;
}

}  // namespace ragmig::testing
