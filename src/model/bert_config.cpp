// BertConfig <-> config.json. Types are checked strictly (an integer key given as 768.0 is an error),
// because a silently truncated size would load the wrong weights later with a far less clear message.
#include "model/bert_config.h"

#include <initializer_list>
#include <limits>
#include <string_view>
#include <variant>

#include "core/error.h"

namespace ragmig::model {
namespace {

[[noreturn]] void fail(const std::string& source, const std::string& key, const std::string& msg) {
  throw DataError(source + ": key \"" + key + "\": " + msg);
}

// One overload per field type; a missing or null key keeps the default.
void read_value(const nlohmann::json& j, const std::string& source, const char* key, int64_t& out) {
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

void read_value(const nlohmann::json& j, const std::string& source, const char* key, double& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_number()) fail(source, key, "expected a number, got " + it->dump());
  out = it->get<double>();
}

void read_value(const nlohmann::json& j, const std::string& source, const char* key, std::string& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_string()) fail(source, key, "expected a string, got " + it->dump());
  out = it->get<std::string>();
}

void read_value(const nlohmann::json& j, const std::string& source, const char* key, bool& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_boolean()) fail(source, key, "expected true or false, got " + it->dump());
  out = it->get<bool>();
}

// Every config.json key BertConfig carries, listed once for both directions.
struct Field {
  const char* key;
  std::variant<int64_t BertConfig::*, double BertConfig::*, std::string BertConfig::*> member;
};
const Field kFields[] = {
    {"vocab_size", &BertConfig::vocab_size},
    {"hidden_size", &BertConfig::hidden_size},
    {"num_hidden_layers", &BertConfig::num_hidden_layers},
    {"num_attention_heads", &BertConfig::num_attention_heads},
    {"intermediate_size", &BertConfig::intermediate_size},
    {"hidden_act", &BertConfig::hidden_act},
    {"hidden_dropout_prob", &BertConfig::hidden_dropout_prob},
    {"attention_probs_dropout_prob", &BertConfig::attention_probs_dropout_prob},
    {"max_position_embeddings", &BertConfig::max_position_embeddings},
    {"type_vocab_size", &BertConfig::type_vocab_size},
    {"layer_norm_eps", &BertConfig::layer_norm_eps},
    {"pad_token_id", &BertConfig::pad_token_id},
    {"initializer_range", &BertConfig::initializer_range},
};

// The kFields named in `keys`, in that order (the families that share some of BERT's keys under BERT's names).
void read_fields(const nlohmann::json& j, const std::string& source, std::initializer_list<std::string_view> keys,
                 BertConfig& c) {
  for (const std::string_view key : keys)
    for (const auto& f : kFields)
      if (key == f.key) std::visit([&](auto member) { read_value(j, source, f.key, c.*member); }, f.member);
}

// DistilBERT's config under its own key names, so that an error names the key the file has.
BertConfig distilbert_config(const nlohmann::json& j, const std::string& source) {
  BertConfig c;
  c.num_hidden_layers = 6;  // DistilBERT's default; the other defaults are BERT-base's too
  read_value(j, source, "vocab_size", c.vocab_size);
  read_value(j, source, "dim", c.hidden_size);
  read_value(j, source, "n_layers", c.num_hidden_layers);
  read_value(j, source, "n_heads", c.num_attention_heads);
  read_value(j, source, "hidden_dim", c.intermediate_size);
  read_value(j, source, "activation", c.hidden_act);
  read_value(j, source, "dropout", c.hidden_dropout_prob);
  read_value(j, source, "attention_dropout", c.attention_probs_dropout_prob);
  read_value(j, source, "max_position_embeddings", c.max_position_embeddings);
  read_value(j, source, "pad_token_id", c.pad_token_id);
  read_value(j, source, "initializer_range", c.initializer_range);
  c.validate(source + " (DistilBERT, read as BERT: dim = hidden_size, n_heads = num_attention_heads, ...)");
  return c;
}

// MPNetConfig: BertConfig's keys less type_vocab_size, plus relative_attention_num_buckets; MPNet's defaults.
BertConfig mpnet_config(const nlohmann::json& j, const std::string& source) {
  BertConfig c;
  c.model_type = "mpnet";
  c.vocab_size = 30527;
  c.max_position_embeddings = 514;
  c.pad_token_id = 1;
  c.type_vocab_size = 0;
  for (const auto& f : kFields)
    if (std::string_view(f.key) != "type_vocab_size")
      std::visit([&](auto member) { read_value(j, source, f.key, c.*member); }, f.member);
  read_value(j, source, "relative_attention_num_buckets", c.relative_attention_num_buckets);
  c.validate(source);
  return c;
}

// ModernBERT's rotary base for one layer type: rope_parameters.TYPE.rope_theta (transformers 5), else the key of
// transformers 4 (`legacy_key`); a rope type other than "default" is refused by key.
double rope_theta(const nlohmann::json& j, const std::string& source, const char* type, const char* legacy_key,
                  double fallback) {
  read_value(j, source, legacy_key, fallback);
  const auto params = j.find("rope_parameters");
  if (params == j.end() || params->is_null()) return fallback;
  if (!params->is_object()) fail(source, "rope_parameters", "expected an object, got " + params->dump());
  const auto it = params->find(type);
  if (it == params->end() || it->is_null()) return fallback;
  const std::string key = std::string("rope_parameters.") + type;
  if (!it->is_object()) fail(source, key, "expected an object, got " + it->dump());
  if (const auto t = it->find("rope_type"); t != it->end() && *t != "default")
    fail(source, key + ".rope_type", t->dump() + " is not supported (\"default\")");
  if (const auto theta = it->find("rope_theta"); theta != it->end() && !theta->is_null()) {
    if (!theta->is_number()) fail(source, key + ".rope_theta", "expected a number, got " + theta->dump());
    return theta->get<double>();
  }
  return fallback;
}

// ModernBertConfig: the sizes under BERT's names, the rest under its own; ModernBERT-base's defaults.
BertConfig modernbert_config(const nlohmann::json& j, const std::string& source) {
  BertConfig c;
  c.model_type = "modernbert";
  c.vocab_size = 50368;
  c.intermediate_size = 1152;
  c.num_hidden_layers = 22;
  c.max_position_embeddings = 8192;
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-5;
  c.pad_token_id = 50283;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  read_fields(j, source,
              {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
               "max_position_embeddings", "pad_token_id", "initializer_range"},
              c);
  read_value(j, source, "hidden_activation", c.hidden_act);
  read_value(j, source, "norm_eps", c.layer_norm_eps);
  read_value(j, source, "attention_dropout", c.attention_probs_dropout_prob);
  read_value(j, source, "mlp_dropout", c.hidden_dropout_prob);
  ModernBertOptions& m = c.modernbert;
  read_value(j, source, "embedding_dropout", m.embedding_dropout);
  read_value(j, source, "norm_bias", m.norm_bias);
  read_value(j, source, "attention_bias", m.attention_bias);
  read_value(j, source, "mlp_bias", m.mlp_bias);
  read_value(j, source, "local_attention", m.local_attention);
  if (const auto it = j.find("rope_scaling"); it != j.end() && !it->is_null())
    fail(source, "rope_scaling", "is not supported (rotary positions as trained: null)");
  m.global_rope_theta = rope_theta(j, source, "full_attention", "global_rope_theta", m.global_rope_theta);
  m.local_rope_theta = rope_theta(j, source, "sliding_attention", "local_rope_theta", m.local_rope_theta);
  if (const auto types = j.find("layer_types"); types != j.end() && !types->is_null()) {
    if (!types->is_array()) fail(source, "layer_types", "expected a list, got " + types->dump());
    for (const auto& t : *types) {
      if (t != "full_attention" && t != "sliding_attention")
        fail(source, "layer_types", "expected \"full_attention\" or \"sliding_attention\", got " + t.dump());
      m.sliding_layers.push_back(t == "sliding_attention");
    }
  } else {
    int64_t every = 3;
    read_value(j, source, "global_attn_every_n_layers", every);
    if (every < 1) fail(source, "global_attn_every_n_layers", "must be positive, got " + std::to_string(every));
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) m.sliding_layers.push_back(i % every != 0);
  }
  c.validate(source);
  return c;
}

// ModernBertConfig's keys of `c`, both transformers 5's (layer_types, rope_parameters) and 4's.
nlohmann::json modernbert_json(const BertConfig& c) {
  const ModernBertOptions& m = c.modernbert;
  nlohmann::json j = {{"model_type", "modernbert"},
                      {"architectures", nlohmann::json::array({"ModernBertModel"})},
                      {"vocab_size", c.vocab_size},
                      {"hidden_size", c.hidden_size},
                      {"intermediate_size", c.intermediate_size},
                      {"num_hidden_layers", c.num_hidden_layers},
                      {"num_attention_heads", c.num_attention_heads},
                      {"hidden_activation", c.hidden_act},
                      {"max_position_embeddings", c.max_position_embeddings},
                      {"initializer_range", c.initializer_range},
                      {"norm_eps", c.layer_norm_eps},
                      {"norm_bias", m.norm_bias},
                      {"pad_token_id", c.pad_token_id},
                      {"attention_bias", m.attention_bias},
                      {"attention_dropout", c.attention_probs_dropout_prob},
                      {"mlp_bias", m.mlp_bias},
                      {"mlp_dropout", c.hidden_dropout_prob},
                      {"embedding_dropout", m.embedding_dropout},
                      {"local_attention", m.local_attention},
                      {"global_rope_theta", m.global_rope_theta},
                      {"local_rope_theta", m.local_rope_theta}};
  nlohmann::json types = nlohmann::json::array();
  for (bool sliding : m.sliding_layers) types.push_back(sliding ? "sliding_attention" : "full_attention");
  j["layer_types"] = types;
  for (int64_t every = 1; every <= c.num_hidden_layers; ++every) {
    bool matches = true;
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) matches = matches && m.sliding_layers[i] == (i % every != 0);
    if (matches) {
      j["global_attn_every_n_layers"] = every;
      break;
    }
  }
  j["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", m.global_rope_theta}}},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", m.local_rope_theta}}}};
  return j;
}

// The decoders' configs (Qwen3Config, Qwen2Config, LlamaConfig, MistralConfig): the sizes under BERT's names, the rest
// under their own; each family's defaults. Only what their models compute with full causal attention in every layer
// and unscaled rotary positions is read; the rest is refused by key.
BertConfig decoder_config(const nlohmann::json& j, const std::string& source, const std::string& model_type) {
  BertConfig c;
  c.model_type = model_type;
  const bool qwen = model_type == "qwen3" || model_type == "qwen2";
  c.vocab_size = qwen ? 151936 : 32000;
  c.hidden_size = 4096;
  c.intermediate_size = qwen ? 22016 : model_type == "mistral" ? 14336 : 11008;
  c.num_hidden_layers = 32;
  c.num_attention_heads = 32;
  c.hidden_act = "silu";
  c.max_position_embeddings = qwen ? 32768 : model_type == "mistral" ? 4096 * 32 : 2048;
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-6;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  read_fields(j, source,
              {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
               "hidden_act", "max_position_embeddings", "pad_token_id", "initializer_range"},
              c);
  read_value(j, source, "rms_norm_eps", c.layer_norm_eps);
  read_value(j, source, "attention_dropout", c.attention_probs_dropout_prob);
  DecoderOptions& d = c.decoder;
  // Mistral's default is 8; the others' as many as the query heads.
  d.num_key_value_heads = model_type == "mistral" ? 8 : c.num_attention_heads;
  read_value(j, source, "num_key_value_heads", d.num_key_value_heads);
  d.head_dim = model_type == "qwen3" ? 128 : c.hidden_size / std::max<int64_t>(c.num_attention_heads, 1);
  read_value(j, source, "head_dim", d.head_dim);
  d.qk_norm = model_type == "qwen3";
  if (model_type == "qwen2") {
    d.qkv_bias = true;  // Qwen2Attention's: q, k and v with biases, o_proj without, whatever the config says
  } else if (model_type != "mistral") {
    bool bias = false;
    read_value(j, source, "attention_bias", bias);
    d.qkv_bias = d.output_bias = bias;
  }
  if (model_type == "llama") read_value(j, source, "mlp_bias", d.mlp_bias);
  read_value(j, source, "rope_theta", d.rope_theta);
  if (const auto it = j.find("rope_scaling"); it != j.end() && !it->is_null())
    fail(source, "rope_scaling", "is not supported (rotary positions as trained: null)");
  if (const auto params = j.find("rope_parameters"); params != j.end() && !params->is_null()) {
    if (!params->is_object()) fail(source, "rope_parameters", "expected an object, got " + params->dump());
    if (const auto t = params->find("rope_type"); t != params->end() && *t != "default")
      fail(source, "rope_parameters.rope_type", t->dump() + " is not supported (\"default\")");
    read_value(*params, source + ": key \"rope_parameters\"", "rope_theta", d.rope_theta);
    double partial = 1.0;
    read_value(*params, source + ": key \"rope_parameters\"", "partial_rotary_factor", partial);
    if (partial != 1.0) fail(source, "rope_parameters.partial_rotary_factor", "is not supported (1: every dimension)");
  }
  if (qwen) {
    bool sliding = false;
    read_value(j, source, "use_sliding_window", sliding);
    if (sliding) fail(source, "use_sliding_window", "true is not supported (full attention in every layer)");
    if (const auto types = j.find("layer_types"); types != j.end() && !types->is_null()) {
      if (!types->is_array()) fail(source, "layer_types", "expected a list, got " + types->dump());
      for (const auto& t : *types)
        if (t != "full_attention")
          fail(source, "layer_types", "expected \"full_attention\" in every layer, got " + t.dump());
    }
  }
  // Custom modeling code (gte-Qwen2's bidirectional attention, LLM2Vec's, ...) computes what the stock model does not;
  // with the same weights it would load and silently embed otherwise.
  if (const auto it = j.find("auto_map"); it != j.end() && it->is_object() && it->contains("AutoModel"))
    fail(source, "auto_map",
         "names custom modeling code (" + (*it)["AutoModel"].dump() + "), which ragmig does not run (it runs the " +
             model_type + " model as transformers has it: causal attention)");
  if (const auto it = j.find("is_causal"); it != j.end() && *it == false)
    fail(source, "is_causal", "false is not supported (ragmig runs the decoders causally, as transformers does)");
  if (model_type == "mistral") {
    d.sliding_window = 4096;
    read_value(j, source, "sliding_window", d.sliding_window);
    if (const auto it = j.find("sliding_window"); it != j.end() && it->is_null()) d.sliding_window = 0;
    if (j.contains("layer_types")) fail(source, "layer_types", "is not supported (Mistral: one window in every layer)");
  }
  c.validate(source);
  return c;
}

nlohmann::json decoder_json(const BertConfig& c) {
  const DecoderOptions& d = c.decoder;
  const std::string& type = c.model_type;
  const char* architecture = type == "qwen3"   ? "Qwen3Model"
                             : type == "qwen2" ? "Qwen2Model"
                             : type == "llama" ? "LlamaModel"
                                               : "MistralModel";
  nlohmann::json j = {{"model_type", type},
                      {"architectures", nlohmann::json::array({architecture})},
                      {"vocab_size", c.vocab_size},
                      {"hidden_size", c.hidden_size},
                      {"intermediate_size", c.intermediate_size},
                      {"num_hidden_layers", c.num_hidden_layers},
                      {"num_attention_heads", c.num_attention_heads},
                      {"num_key_value_heads", d.num_key_value_heads},
                      {"head_dim", d.head_dim},
                      {"hidden_act", c.hidden_act},
                      {"max_position_embeddings", c.max_position_embeddings},
                      {"initializer_range", c.initializer_range},
                      {"rms_norm_eps", c.layer_norm_eps},
                      {"attention_dropout", c.attention_probs_dropout_prob},
                      {"tie_word_embeddings", false},
                      {"rope_theta", d.rope_theta},
                      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", d.rope_theta}}}};
  if (type == "qwen3" || type == "llama") j["attention_bias"] = d.qkv_bias;
  if (type == "llama") j["mlp_bias"] = d.mlp_bias;
  if (type == "qwen3" || type == "qwen2") j["use_sliding_window"] = false;
  if (type == "mistral") j["sliding_window"] = d.sliding_window > 0 ? nlohmann::json(d.sliding_window) : nullptr;
  return j;
}

// Layer types from layer_types, or from sliding_window_pattern (every pattern-th layer global) where absent, as
// Gemma3TextConfig derives them.
std::vector<bool> gemma3_sliding_layers(const nlohmann::json& j, const std::string& source, int64_t layers) {
  std::vector<bool> sliding;
  if (const auto types = j.find("layer_types"); types != j.end() && !types->is_null()) {
    if (!types->is_array()) fail(source, "layer_types", "expected a list, got " + types->dump());
    for (const auto& t : *types) {
      if (t != "full_attention" && t != "sliding_attention")
        fail(source, "layer_types", "expected \"full_attention\" or \"sliding_attention\", got " + t.dump());
      sliding.push_back(t == "sliding_attention");
    }
    return sliding;
  }
  int64_t pattern = 6;
  read_value(j, source, "sliding_window_pattern", pattern);
  if (pattern < 1) fail(source, "sliding_window_pattern", "must be positive, got " + std::to_string(pattern));
  for (int64_t i = 0; i < layers; ++i) sliding.push_back((i + 1) % pattern != 0);
  return sliding;
}

// Gemma3TextConfig: the sizes under BERT's names, the rest under its own; Gemma3TextConfig's defaults. Read as
// EmbeddingGemma runs it (use_bidirectional_attention true); a causal Gemma 3, soft-capped scores and scaled rotary
// positions are refused by key.
BertConfig gemma3_config(const nlohmann::json& j, const std::string& source) {
  BertConfig c;
  c.model_type = "gemma3_text";
  c.vocab_size = 262208;
  c.hidden_size = 2304;
  c.intermediate_size = 9216;
  c.num_hidden_layers = 26;
  c.num_attention_heads = 8;
  c.hidden_act = "gelu_pytorch_tanh";
  c.max_position_embeddings = 131072;
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-6;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  read_fields(j, source,
              {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
               "max_position_embeddings", "pad_token_id", "initializer_range"},
              c);
  read_value(j, source, "hidden_activation", c.hidden_act);
  read_value(j, source, "rms_norm_eps", c.layer_norm_eps);
  read_value(j, source, "attention_dropout", c.attention_probs_dropout_prob);
  Gemma3Options& g = c.gemma3;
  read_value(j, source, "num_key_value_heads", g.num_key_value_heads);
  read_value(j, source, "head_dim", g.head_dim);
  read_value(j, source, "attention_bias", g.attention_bias);
  read_value(j, source, "query_pre_attn_scalar", g.query_pre_attn_scalar);
  read_value(j, source, "sliding_window", g.sliding_window);
  bool bidirectional = false;
  read_value(j, source, "use_bidirectional_attention", bidirectional);
  if (!bidirectional)
    fail(source, "use_bidirectional_attention",
         "false is not supported (ragmig runs Gemma 3 as EmbeddingGemma does: true, every token seeing both sides)");
  for (const char* key : {"attn_logit_softcapping", "rope_scaling"})
    if (const auto it = j.find(key); it != j.end() && !it->is_null()) fail(source, key, "is not supported (null)");
  g.rope_theta = rope_theta(j, source, "full_attention", "rope_theta", g.rope_theta);
  g.rope_local_theta = rope_theta(j, source, "sliding_attention", "rope_local_base_freq", g.rope_local_theta);
  g.sliding_layers = gemma3_sliding_layers(j, source, c.num_hidden_layers);
  c.validate(source);
  return c;
}

nlohmann::json gemma3_json(const BertConfig& c) {
  const Gemma3Options& g = c.gemma3;
  nlohmann::json types = nlohmann::json::array();
  for (bool sliding : g.sliding_layers) types.push_back(sliding ? "sliding_attention" : "full_attention");
  return {{"model_type", "gemma3_text"},
          {"architectures", nlohmann::json::array({"Gemma3TextModel"})},
          {"vocab_size", c.vocab_size},
          {"hidden_size", c.hidden_size},
          {"intermediate_size", c.intermediate_size},
          {"num_hidden_layers", c.num_hidden_layers},
          {"num_attention_heads", c.num_attention_heads},
          {"num_key_value_heads", g.num_key_value_heads},
          {"head_dim", g.head_dim},
          {"hidden_activation", c.hidden_act},
          {"max_position_embeddings", c.max_position_embeddings},
          {"initializer_range", c.initializer_range},
          {"rms_norm_eps", c.layer_norm_eps},
          {"pad_token_id", c.pad_token_id},
          {"attention_bias", g.attention_bias},
          {"attention_dropout", c.attention_probs_dropout_prob},
          {"query_pre_attn_scalar", g.query_pre_attn_scalar},
          {"sliding_window", g.sliding_window},
          {"layer_types", types},
          {"use_bidirectional_attention", true},
          {"attn_logit_softcapping", nullptr},
          {"final_logit_softcapping", nullptr},
          {"rope_theta", g.rope_theta},
          {"rope_local_base_freq", g.rope_local_theta},
          {"rope_parameters",
           {{"full_attention", {{"rope_type", "default"}, {"rope_theta", g.rope_theta}}},
            {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", g.rope_local_theta}}}}}};
}

}  // namespace

double BertConfig::minimum_weight_count() const {
  const double h = static_cast<double>(hidden_size);
  const double positions = rotary() ? 0 : static_cast<double>(max_position_embeddings);
  const double attention = 2 * h * static_cast<double>(query_width() + key_width());
  const double ffn = (gated_mlp() ? 3 : 2) * h * static_cast<double>(intermediate_size);
  return (static_cast<double>(vocab_size) + positions + static_cast<double>(type_vocab_size)) * h +
         static_cast<double>(num_hidden_layers) * (attention + ffn);
}

bool BertConfig::sliding_layer(int64_t i) const {
  const std::vector<bool>& layers = is_gemma3() ? gemma3.sliding_layers : modernbert.sliding_layers;
  return (is_modernbert() || is_gemma3()) && i >= 0 && i < static_cast<int64_t>(layers.size()) &&
         layers[static_cast<size_t>(i)];
}

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
  if (model_type != "bert" && !roberta() && model_type != "mpnet" && !is_modernbert() && !is_decoder() && !is_gemma3())
    fail(source, "model_type",
         "\"" + model_type +
             "\" is not supported (\"bert\", \"roberta\", \"xlm-roberta\", \"mpnet\", \"modernbert\", \"qwen3\", "
             "\"qwen2\", \"llama\", \"mistral\" or \"gemma3_text\")");
  if (is_gemma3()) {
    if (type_vocab_size != 0) fail(source, "type_vocab_size", "Gemma 3 has no token types (expected 0)");
    const Gemma3Options& g = gemma3;
    positive("num_key_value_heads", g.num_key_value_heads);
    positive("head_dim", g.head_dim);
    positive("sliding_window", g.sliding_window);
    if (g.head_dim % 2 != 0)
      fail(source, "head_dim", "rotary positions need an even head_dim, got " + std::to_string(g.head_dim));
    if (num_attention_heads % g.num_key_value_heads != 0)
      fail(source, "num_key_value_heads",
           std::to_string(g.num_key_value_heads) + " does not divide num_attention_heads " +
               std::to_string(num_attention_heads));
    if (static_cast<int64_t>(g.sliding_layers.size()) != num_hidden_layers)
      fail(source, "layer_types",
           std::to_string(g.sliding_layers.size()) + " layer types for " + std::to_string(num_hidden_layers) +
               " layers (num_hidden_layers)");
    positive("query_pre_attn_scalar", g.query_pre_attn_scalar);
    if (!(g.rope_theta > 0.0)) fail(source, "rope_theta", "must be positive");
    if (!(g.rope_local_theta > 0.0)) fail(source, "rope_local_base_freq", "must be positive");
    if (hidden_act != "gelu_pytorch_tanh")
      fail(source, "hidden_activation", "\"" + hidden_act + "\" is not supported (Gemma 3: \"gelu_pytorch_tanh\")");
  } else if (is_decoder()) {
    if (type_vocab_size != 0) fail(source, "type_vocab_size", "a decoder has no token types (expected 0)");
    const DecoderOptions& d = decoder;
    positive("num_key_value_heads", d.num_key_value_heads);
    positive("head_dim", d.head_dim);
    if (d.head_dim % 2 != 0)
      fail(source, "head_dim", "rotary positions need an even head_dim, got " + std::to_string(d.head_dim));
    if (num_attention_heads % d.num_key_value_heads != 0)
      fail(source, "num_key_value_heads",
           std::to_string(d.num_key_value_heads) + " does not divide num_attention_heads " +
               std::to_string(num_attention_heads));
    if (!(d.rope_theta > 0.0)) fail(source, "rope_theta", "must be positive");
    if (d.sliding_window < 0) fail(source, "sliding_window", "must not be negative");
    if (hidden_act != "silu")
      fail(source, "hidden_act", "\"" + hidden_act + "\" is not supported (" + model_type + ": \"silu\")");
  } else if (is_modernbert()) {
    if (type_vocab_size != 0) fail(source, "type_vocab_size", "ModernBERT has no token types (expected 0)");
    const ModernBertOptions& m = modernbert;
    positive("local_attention", m.local_attention);
    if (static_cast<int64_t>(m.sliding_layers.size()) != num_hidden_layers)
      fail(source, "layer_types", std::to_string(m.sliding_layers.size()) + " layer types for " +
                                      std::to_string(num_hidden_layers) + " layers (num_hidden_layers)");
    if (!(m.global_rope_theta > 0.0)) fail(source, "global_rope_theta", "must be positive");
    if (!(m.local_rope_theta > 0.0)) fail(source, "local_rope_theta", "must be positive");
    if (!(m.embedding_dropout >= 0.0 && m.embedding_dropout < 1.0))
      fail(source, "embedding_dropout", "must be in [0, 1), got " + std::to_string(m.embedding_dropout));
  } else if (mpnet()) {
    if (type_vocab_size != 0) fail(source, "type_vocab_size", "MPNet has no token types (expected 0)");
    // HF's MPNet computes 32 buckets whatever the config says: fewer rows would be read past their end.
    if (relative_attention_num_buckets < 32)
      fail(source, "relative_attention_num_buckets",
           "must be at least 32 (MPNet's buckets), got " + std::to_string(relative_attention_num_buckets));
  } else {
    positive("type_vocab_size", type_vocab_size);
  }
  if (hidden_size % num_attention_heads != 0 && !grouped_heads())  // the decoders' and Gemma 3's heads are head_dim wide
    fail(source, "hidden_size", "hidden_size " + std::to_string(hidden_size) +
                                    " is not a multiple of num_attention_heads " + std::to_string(num_attention_heads));
  if (is_modernbert() && (hidden_size / num_attention_heads) % 2 != 0)
    fail(source, "hidden_size", "rotary positions need an even head size (hidden_size / num_attention_heads), got " +
                                    std::to_string(hidden_size / num_attention_heads));
  // ModernBertConfig's names for the keys BERT's read into
  // (and the decoders', where they have them: attention_dropout, rms_norm_eps)
  const auto named = [&](const char* bert, const char* modern) {
    return is_modernbert() || grouped_heads() ? modern : bert;
  };
  if (hidden_act != "gelu" && hidden_act != "relu" && !grouped_heads())
    fail(source, named("hidden_act", "hidden_activation"),
         "\"" + hidden_act + "\" is not supported (use \"gelu\" or \"relu\")");
  auto probability = [&](const char* key, double p) {
    if (!(p >= 0.0 && p < 1.0)) fail(source, key, "must be in [0, 1), got " + std::to_string(p));
  };
  probability(named("hidden_dropout_prob", "mlp_dropout"), hidden_dropout_prob);
  probability(named("attention_probs_dropout_prob", "attention_dropout"), attention_probs_dropout_prob);
  if (!(layer_norm_eps > 0.0))
    fail(source, grouped_heads() ? "rms_norm_eps" : named("layer_norm_eps", "norm_eps"), "must be positive");
  if (!(initializer_range >= 0.0)) fail(source, "initializer_range", "must not be negative");
  if (pad_token_id < 0 || pad_token_id >= vocab_size)
    fail(source, "pad_token_id", std::to_string(pad_token_id) + " is outside the vocabulary [0, " +
                                     std::to_string(vocab_size) + ")");
  if (max_tokens() < 1)
    fail(source, "max_position_embeddings", std::to_string(max_position_embeddings) +
                                                " leaves no position (the first position is row " +
                                                std::to_string(position_offset()) + ")");
}

nlohmann::json to_json(const BertConfig& c) {
  if (c.is_modernbert()) return modernbert_json(c);
  if (c.is_decoder()) return decoder_json(c);
  if (c.is_gemma3()) return gemma3_json(c);
  nlohmann::json j = {{"model_type", "bert"}, {"architectures", {"BertModel"}}, {"position_embedding_type", "absolute"}};
  if (c.roberta())
    j = {{"model_type", c.model_type},
         {"architectures", {c.model_type == "roberta" ? "RobertaModel" : "XLMRobertaModel"}},
         {"position_embedding_type", "absolute"}};
  if (c.mpnet()) j = {{"model_type", "mpnet"}, {"architectures", {"MPNetModel"}},
                      {"relative_attention_num_buckets", c.relative_attention_num_buckets}};
  for (const auto& f : kFields)
    if (!c.mpnet() || std::string_view(f.key) != "type_vocab_size")
      std::visit([&](auto member) { j[f.key] = c.*member; }, f.member);
  return j;
}

BertConfig bert_config_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw DataError(source + ": expected a JSON object");
  std::string model_type = "bert";
  read_value(j, source, "model_type", model_type);
  if (model_type == "distilbert") return distilbert_config(j, source);
  if (model_type == "mpnet") return mpnet_config(j, source);
  if (model_type == "modernbert") return modernbert_config(j, source);
  if (model_type == "qwen3" || model_type == "qwen2" || model_type == "llama" || model_type == "mistral")
    return decoder_config(j, source, model_type);
  if (model_type == "gemma3_text") return gemma3_config(j, source);
  BertConfig c;
  c.model_type = model_type;
  if (!c.roberta() && model_type != "bert")
    fail(source, "model_type",
         "\"" + model_type +
             "\" is not supported (ragmig runs BERT encoders: bert, distilbert, roberta, "
             "xlm-roberta, mpnet, modernbert; and qwen3, qwen2, llama, mistral, gemma3_text)");
  if (c.roberta()) {  // RobertaConfig's defaults where they differ from BertConfig's
    if (model_type == "roberta") c.vocab_size = 50265;
    c.pad_token_id = 1;
  }
  for (const auto& f : kFields) std::visit([&](auto member) { read_value(j, source, f.key, c.*member); }, f.member);
  // Relative position embeddings change the attention math; loading such weights into the absolute
  // encoder would run but compute something else.
  std::string position_type = "absolute";
  read_value(j, source, "position_embedding_type", position_type);
  if (position_type != "absolute")
    fail(source, "position_embedding_type", "\"" + position_type + "\" is not supported (only \"absolute\")");
  c.validate(source);
  return c;
}

}  // namespace ragmig::model
