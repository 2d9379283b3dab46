// BertConfig <-> config.json. Types are checked strictly (an integer key given as 768.0 is an error),
// because a silently truncated size would load the wrong weights later with a far less clear message.
#include "model/bert_config.h"

#include <limits>

#include "core/error.h"

namespace ragmig::model {
namespace {

[[noreturn]] void fail(const std::string& source, const std::string& key, const std::string& msg) {
  throw DataError(source + ": key \"" + key + "\": " + msg);
}

void read_int(const nlohmann::json& j, const std::string& source, const char* key, int64_t& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (it->is_number_unsigned()) {
    if (it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(source, key, "integer out of range");
    out = static_cast<int64_t>(it->get<uint64_t>());
  } else if (it->is_number_integer()) {
    out = it->get<int64_t>();
  } else {
    fail(source, key, "expected an integer, got " + it->dump());
  }
}

void read_double(const nlohmann::json& j, const std::string& source, const char* key, double& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_number()) fail(source, key, "expected a number, got " + it->dump());
  out = it->get<double>();
}

void read_string(const nlohmann::json& j, const std::string& source, const char* key, std::string& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_string()) fail(source, key, "expected a string, got " + it->dump());
  out = it->get<std::string>();
}

}  // namespace

void BertConfig::validate(const std::string& source) const {
  auto positive = [&](const char* key, int64_t v) {
    if (v <= 0) fail(source, key, "must be positive, got " + std::to_string(v));
  };
  positive("vocab_size", vocab_size);
  positive("hidden_size", hidden_size);
  positive("num_hidden_layers", num_hidden_layers);
  positive("num_attention_heads", num_attention_heads);
  positive("intermediate_size", intermediate_size);
  positive("max_position_embeddings", max_position_embeddings);
  positive("type_vocab_size", type_vocab_size);
  if (hidden_size % num_attention_heads != 0)
    fail(source, "hidden_size", "hidden_size " + std::to_string(hidden_size) +
                                    " is not a multiple of num_attention_heads " + std::to_string(num_attention_heads));
  if (hidden_act != "gelu" && hidden_act != "relu")
    fail(source, "hidden_act", "\"" + hidden_act + "\" is not supported (use \"gelu\" or \"relu\")");
  auto probability = [&](const char* key, double p) {
    if (!(p >= 0.0 && p < 1.0)) fail(source, key, "must be in [0, 1), got " + std::to_string(p));
  };
  probability("hidden_dropout_prob", hidden_dropout_prob);
  probability("attention_probs_dropout_prob", attention_probs_dropout_prob);
  if (!(layer_norm_eps > 0.0)) fail(source, "layer_norm_eps", "must be positive");
  if (!(initializer_range >= 0.0)) fail(source, "initializer_range", "must not be negative");
  if (pad_token_id < 0 || pad_token_id >= vocab_size)
    fail(source, "pad_token_id", std::to_string(pad_token_id) + " is outside the vocabulary [0, " +
                                     std::to_string(vocab_size) + ")");
}

nlohmann::json to_json(const BertConfig& c) {
  return {
      {"model_type", "bert"},
      {"architectures", {"BertModel"}},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"num_hidden_layers", c.num_hidden_layers},
      {"num_attention_heads", c.num_attention_heads},
      {"intermediate_size", c.intermediate_size},
      {"hidden_act", c.hidden_act},
      {"hidden_dropout_prob", c.hidden_dropout_prob},
      {"attention_probs_dropout_prob", c.attention_probs_dropout_prob},
      {"max_position_embeddings", c.max_position_embeddings},
      {"type_vocab_size", c.type_vocab_size},
      {"layer_norm_eps", c.layer_norm_eps},
      {"pad_token_id", c.pad_token_id},
      {"initializer_range", c.initializer_range},
      {"position_embedding_type", "absolute"},
  };
}

BertConfig bert_config_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw DataError(source + ": expected a JSON object");
  BertConfig c;
  read_int(j, source, "vocab_size", c.vocab_size);
  read_int(j, source, "hidden_size", c.hidden_size);
  read_int(j, source, "num_hidden_layers", c.num_hidden_layers);
  read_int(j, source, "num_attention_heads", c.num_attention_heads);
  read_int(j, source, "intermediate_size", c.intermediate_size);
  read_string(j, source, "hidden_act", c.hidden_act);
  read_double(j, source, "hidden_dropout_prob", c.hidden_dropout_prob);
  read_double(j, source, "attention_probs_dropout_prob", c.attention_probs_dropout_prob);
  read_int(j, source, "max_position_embeddings", c.max_position_embeddings);
  read_int(j, source, "type_vocab_size", c.type_vocab_size);
  read_double(j, source, "layer_norm_eps", c.layer_norm_eps);
  read_int(j, source, "pad_token_id", c.pad_token_id);
  read_double(j, source, "initializer_range", c.initializer_range);
  // Relative position embeddings change the attention math; loading such weights into the absolute
  // encoder would run but compute something else.
  std::string position_type = "absolute";
  read_string(j, source, "position_embedding_type", position_type);
  if (position_type != "absolute")
    fail(source, "position_embedding_type", "\"" + position_type + "\" is not supported (only \"absolute\")");
  c.validate(source);
  return c;
}

}  // namespace ragmig::model
