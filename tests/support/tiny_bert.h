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

/// `c` as a ModernBERT config (model/modernbert.h): ModernBERT-base's layer pattern (layers 0, 3, ... global, the
/// others sliding), a window of `local_attention` tokens, no token types, pad id 0.
inline model::BertConfig as_modernbert(model::BertConfig c, int64_t local_attention) {
  c.model_type = "modernbert";
  c.type_vocab_size = 0;
  c.pad_token_id = 0;
  c.layer_norm_eps = 1e-5;
  c.modernbert.local_attention = local_attention;
  c.modernbert.sliding_layers.clear();
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) c.modernbert.sliding_layers.push_back(i % 3 != 0);
  return c;
}

}  // namespace ragmig::testing
