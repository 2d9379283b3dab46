// Tests of BertConfig <-> config.json: Hugging Face's defaults and key names, round trips, and errors that
// name the source and the key.
#include "model/bert_config.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ragmig::model {
namespace {

void expect_error(const nlohmann::json& j, const std::string& key) {
  try {
    bert_config_from_json(j, "some/config.json");
    ADD_FAILURE() << "no DataError for " << j.dump();
  } catch (const DataError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("some/config.json"), std::string::npos) << what;
    EXPECT_NE(what.find("\"" + key + "\""), std::string::npos) << what;
  }
}

TEST(BertConfig, DefaultsAreHuggingFaces) {
  BertConfig c;
  EXPECT_EQ(c.vocab_size, 30522);
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.num_hidden_layers, 12);
  EXPECT_EQ(c.num_attention_heads, 12);
  EXPECT_EQ(c.intermediate_size, 3072);
  EXPECT_EQ(c.hidden_act, "gelu");
  EXPECT_DOUBLE_EQ(c.hidden_dropout_prob, 0.1);
  EXPECT_DOUBLE_EQ(c.attention_probs_dropout_prob, 0.1);
  EXPECT_EQ(c.max_position_embeddings, 512);
  EXPECT_EQ(c.type_vocab_size, 2);
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-12);
  EXPECT_EQ(c.pad_token_id, 0);
  EXPECT_DOUBLE_EQ(c.initializer_range, 0.02);
  EXPECT_NO_THROW(c.validate());
  EXPECT_EQ(bert_config_from_json(nlohmann::json::object(), "empty"), c);
}

TEST(BertConfig, JsonRoundTripAndHfKeys) {
  BertConfig c;
  c.vocab_size = 1000;
  c.hidden_size = 64;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 128;
  c.hidden_act = "relu";
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.25;
  c.max_position_embeddings = 128;
  c.type_vocab_size = 1;
  c.layer_norm_eps = 1e-5;
  c.pad_token_id = 3;
  c.initializer_range = 0.05;
  auto j = to_json(c);
  EXPECT_EQ(j["model_type"], "bert");
  EXPECT_EQ(j["architectures"], nlohmann::json::array({"BertModel"}));
  EXPECT_EQ(j["hidden_size"], 64);
  EXPECT_TRUE(j["hidden_size"].is_number_integer());
  EXPECT_EQ(bert_config_from_json(j, "x"), c);
  EXPECT_EQ(bert_config_from_json(nlohmann::json::parse(j.dump()), "x"), c);
}

TEST(BertConfig, ReadsARealHfConfig) {
  // bert-base-uncased's config.json, with the keys ragmig ignores.
  auto j = nlohmann::json::parse(R"({
    "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": false,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02,
    "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
    "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0, "position_embedding_type": "absolute",
    "transformers_version": "4.6.0.dev0", "type_vocab_size": 2, "use_cache": true, "vocab_size": 30522})");
  EXPECT_EQ(bert_config_from_json(j, "bert-base"), BertConfig{});
}

TEST(BertConfig, ReadsADistilBertConfigAsBertAndRefusesOtherModelTypes) {
  // distilbert-base-uncased's config.json as transformers 5 saves it.
  auto j = nlohmann::json::parse(R"({
    "activation": "gelu", "architectures": ["DistilBertForMaskedLM"], "attention_dropout": 0.1, "dim": 768,
    "dropout": 0.1, "hidden_dim": 3072, "initializer_range": 0.02, "max_position_embeddings": 512,
    "model_type": "distilbert", "n_heads": 12, "n_layers": 6, "pad_token_id": 0, "qa_dropout": 0.1,
    "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": false, "tie_word_embeddings": true, "vocab_size": 30522})");
  BertConfig six_layers;
  six_layers.num_hidden_layers = 6;
  EXPECT_EQ(bert_config_from_json(j, "distilbert"), six_layers);
  j["dim"] = 64;
  j["n_heads"] = 2;
  j["hidden_dim"] = 128;
  j["n_layers"] = 3;
  j["activation"] = "relu";
  const BertConfig small = bert_config_from_json(j, "distilbert");
  EXPECT_EQ(small.hidden_size, 64);
  EXPECT_EQ(small.num_attention_heads, 2);
  EXPECT_EQ(small.intermediate_size, 128);
  EXPECT_EQ(small.num_hidden_layers, 3);
  EXPECT_EQ(small.hidden_act, "relu");
  EXPECT_EQ(bert_config_from_json(nlohmann::json{{"model_type", "distilbert"}}, "x").num_hidden_layers, 6)
      << "DistilBERT's defaults where a key is absent";
  expect_error({{"model_type", "distilbert"}, {"dim", "768"}}, "dim");
  expect_error({{"model_type", "distilbert"}, {"dim", 100}, {"n_heads", 3}}, "hidden_size");
  expect_error({{"model_type", "deberta-v2"}}, "model_type");
  expect_error({{"model_type", 3}}, "model_type");
}

TEST(BertConfig, ReadsAndWritesAnMPNetConfig) {
  // sentence-transformers/all-mpnet-base-v2's config.json.
  const auto j = nlohmann::json::parse(R"({
    "_name_or_path": "microsoft/mpnet-base", "architectures": ["MPNetForMaskedLM"],
    "attention_probs_dropout_prob": 0.1, "bos_token_id": 0, "eos_token_id": 2, "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
    "layer_norm_eps": 1e-05, "max_position_embeddings": 514, "model_type": "mpnet", "num_attention_heads": 12,
    "num_hidden_layers": 12, "pad_token_id": 1, "relative_attention_num_buckets": 32, "torch_dtype": "float32",
    "transformers_version": "4.8.2", "vocab_size": 30527})");
  const BertConfig c = bert_config_from_json(j, "all-mpnet-base-v2");
  EXPECT_TRUE(c.mpnet());
  EXPECT_EQ(c.vocab_size, 30527);
  EXPECT_EQ(c.layer_norm_eps, 1e-5);
  EXPECT_EQ(c.type_vocab_size, 0) << "no token types";
  EXPECT_EQ(c.position_offset(), 2);
  EXPECT_EQ(c.max_tokens(), 512);
  const auto written = to_json(c);
  EXPECT_EQ(written["model_type"], "mpnet");
  EXPECT_EQ(written["architectures"], nlohmann::json::array({"MPNetModel"}));
  EXPECT_FALSE(written.contains("type_vocab_size"));
  EXPECT_FALSE(written.contains("position_embedding_type"));
  EXPECT_EQ(bert_config_from_json(written, "again"), c);
  EXPECT_EQ(bert_config_from_json(nlohmann::json{{"model_type", "mpnet"}}, "x").pad_token_id, 1) << "MPNet's defaults";
  expect_error({{"model_type", "mpnet"}, {"relative_attention_num_buckets", 16}}, "relative_attention_num_buckets");
  expect_error({{"model_type", "mpnet"}, {"max_position_embeddings", 2}}, "max_position_embeddings");
  BertConfig bert;  // BERT's positions and token types are unchanged
  EXPECT_EQ(bert.position_offset(), 0);
  EXPECT_EQ(bert.max_tokens(), 512);
  EXPECT_FALSE(to_json(bert).contains("relative_attention_num_buckets"));
}

TEST(BertConfig, ReadsAndWritesAModernBertConfig) {
  // answerdotai/ModernBERT-base's config.json (transformers 4's keys).
  const auto base = nlohmann::json::parse(R"({
    "architectures": ["ModernBertForMaskedLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 50281, "classifier_activation": "gelu", "classifier_pooling": "mean", "cls_token_id": 50281,
    "decoder_bias": true, "embedding_dropout": 0.0, "eos_token_id": 50282, "global_attn_every_n_layers": 3,
    "global_rope_theta": 160000.0, "hidden_activation": "gelu", "hidden_size": 768, "initializer_cutoff_factor": 2.0,
    "initializer_range": 0.02, "intermediate_size": 1152, "layer_norm_eps": 1e-05, "local_attention": 128,
    "local_rope_theta": 10000.0, "max_position_embeddings": 8192, "mlp_bias": false, "mlp_dropout": 0.0,
    "model_type": "modernbert", "norm_bias": false, "norm_eps": 1e-05, "num_attention_heads": 12,
    "num_hidden_layers": 22, "pad_token_id": 50283, "position_embedding_type": "absolute", "sep_token_id": 50282,
    "tie_word_embeddings": true, "vocab_size": 50368})");
  const BertConfig c = bert_config_from_json(base, "ModernBERT-base");
  EXPECT_TRUE(c.is_modernbert());
  EXPECT_EQ(c.type_vocab_size, 0);
  EXPECT_EQ(c.max_tokens(), 8192) << "rotary positions: no offset";
  EXPECT_EQ(c.modernbert.sliding_layers.size(), 22u);
  for (size_t i = 0; i < 22; ++i) EXPECT_EQ(c.modernbert.sliding_layers[i], i % 3 != 0) << "layer " << i;
  EXPECT_EQ(c.modernbert.local_attention, 128);
  EXPECT_DOUBLE_EQ(c.modernbert.global_rope_theta, 160000.0);
  EXPECT_DOUBLE_EQ(c.modernbert.local_rope_theta, 10000.0);
  EXPECT_EQ(bert_config_from_json(nlohmann::json{{"model_type", "modernbert"}}, "defaults"), c)
      << "ModernBertConfig's defaults are ModernBERT-base";

  // Written with both transformers 5's keys and 4's, and read back the same from either.
  const nlohmann::json written = to_json(c);
  EXPECT_EQ(written["architectures"], nlohmann::json::array({"ModernBertModel"}));
  EXPECT_EQ(written["global_attn_every_n_layers"], 3);
  EXPECT_EQ(written["layer_types"][1], "sliding_attention");
  EXPECT_EQ(written["rope_parameters"]["full_attention"]["rope_theta"], 160000.0);
  EXPECT_EQ(bert_config_from_json(written, "written"), c);
  nlohmann::json v5 = written;
  for (const char* key : {"global_attn_every_n_layers", "global_rope_theta", "local_rope_theta"}) v5.erase(key);
  EXPECT_EQ(bert_config_from_json(v5, "v5"), c);

  // transformers 5's form of a small one: its own layer pattern and bases.
  nlohmann::json small = {{"model_type", "modernbert"}, {"hidden_size", 32}, {"num_attention_heads", 4},
                          {"num_hidden_layers", 2}, {"intermediate_size", 48}, {"vocab_size", 100},
                          {"pad_token_id", 3}, {"norm_bias", true},
                          {"layer_types", {"sliding_attention", "full_attention"}},
                          {"rope_parameters",
                           {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 5e5}}},
                            {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 1e3}}}}}};
  const BertConfig s = bert_config_from_json(small, "small");
  EXPECT_EQ(s.modernbert.sliding_layers, (std::vector<bool>{true, false}));
  EXPECT_DOUBLE_EQ(s.modernbert.global_rope_theta, 5e5);
  EXPECT_DOUBLE_EQ(s.modernbert.local_rope_theta, 1e3);
  EXPECT_TRUE(s.modernbert.norm_bias);
  EXPECT_FALSE(to_json(s).contains("global_attn_every_n_layers")) << "no every-n pattern starts with a sliding layer";
  EXPECT_EQ(bert_config_from_json(to_json(s), "again"), s);

  const auto broken = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json j = small;
    j[key] = value;
    return j;
  };
  expect_error(broken("layer_types", {"full_attention"}), "layer_types");
  expect_error(broken("layer_types", {"full_attention", "chunked_attention"}), "layer_types");
  expect_error(broken("rope_parameters", {{"full_attention", {{"rope_type", "yarn"}}}}),
               "rope_parameters.full_attention.rope_type");
  expect_error(broken("rope_parameters", {{"sliding_attention", {{"rope_theta", "big"}}}}),
               "rope_parameters.sliding_attention.rope_theta");
  expect_error(broken("rope_scaling", {{"type", "linear"}, {"factor", 2.0}}), "rope_scaling");
  expect_error(broken("hidden_activation", "silu"), "hidden_activation");
  expect_error(broken("norm_bias", "yes"), "norm_bias");
  expect_error(broken("norm_eps", 0.0), "norm_eps");
  expect_error(broken("local_attention", 0), "local_attention");
  expect_error(broken("num_attention_heads", 5), "hidden_size");   // 32 is not a multiple of 5
  expect_error(broken("hidden_size", 36), "hidden_size");          // 36 / 4 = 9: rotary needs an even head size
  expect_error({{"model_type", "modernbert"}, {"global_attn_every_n_layers", 0}}, "global_attn_every_n_layers");
}

TEST(BertConfig, ReadsAndWritesARobertaConfig) {
  // sentence-transformers/all-distilroberta-v1's config.json.
  const auto j = nlohmann::json::parse(R"({
    "_name_or_path": "distilroberta-base", "architectures": ["RobertaModel"], "attention_probs_dropout_prob": 0.1,
    "bos_token_id": 0, "eos_token_id": 2, "gradient_checkpointing": false, "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
    "layer_norm_eps": 1e-05, "max_position_embeddings": 514, "model_type": "roberta", "num_attention_heads": 12,
    "num_hidden_layers": 6, "pad_token_id": 1, "position_embedding_type": "absolute", "transformers_version": "4.8.2",
    "type_vocab_size": 1, "use_cache": true, "vocab_size": 50265})");
  const BertConfig c = bert_config_from_json(j, "all-distilroberta-v1");
  EXPECT_TRUE(c.roberta());
  EXPECT_EQ(c.num_hidden_layers, 6);
  EXPECT_EQ(c.type_vocab_size, 1);
  EXPECT_EQ(c.position_offset(), 2) << "pad_token_id + 1";
  EXPECT_EQ(c.max_tokens(), 512);
  const auto written = to_json(c);
  EXPECT_EQ(written["model_type"], "roberta");
  EXPECT_EQ(written["architectures"], nlohmann::json::array({"RobertaModel"}));
  EXPECT_EQ(bert_config_from_json(written, "again"), c);
  const BertConfig defaults = bert_config_from_json(nlohmann::json{{"model_type", "roberta"}}, "x");
  EXPECT_EQ(defaults.vocab_size, 50265) << "RobertaConfig's defaults";
  EXPECT_EQ(defaults.pad_token_id, 1);
  BertConfig other_pad = c;
  other_pad.pad_token_id = 0;
  EXPECT_EQ(other_pad.position_offset(), 1);
  expect_error({{"model_type", "roberta"}, {"max_position_embeddings", 2}}, "max_position_embeddings");
}

TEST(BertConfig, ErrorsNameSourceAndKey) {
  expect_error({{"hidden_size", "768"}}, "hidden_size");
  expect_error({{"hidden_size", 768.0}}, "hidden_size");
  expect_error({{"vocab_size", -5}}, "vocab_size");
  expect_error({{"num_hidden_layers", 0}}, "num_hidden_layers");
  expect_error({{"hidden_dropout_prob", "0.1"}}, "hidden_dropout_prob");
  expect_error({{"hidden_dropout_prob", 1.5}}, "hidden_dropout_prob");
  expect_error({{"hidden_act", "gelu_new"}}, "hidden_act");
  expect_error({{"hidden_act", 3}}, "hidden_act");
  expect_error({{"hidden_size", 100}, {"num_attention_heads", 12}}, "hidden_size");
  expect_error({{"pad_token_id", 40000}}, "pad_token_id");
  expect_error({{"position_embedding_type", "relative_key"}}, "position_embedding_type");
  expect_error({{"layer_norm_eps", 0}}, "layer_norm_eps");
  EXPECT_THROW(bert_config_from_json(nlohmann::json::array(), "x"), DataError);
}

TEST(BertConfig, ValidateNamesItsSource) {
  BertConfig c;
  c.num_attention_heads = 5;
  try {
    c.validate("run.toml");
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("run.toml"), std::string::npos);
  }
}

}  // namespace
}  // namespace ragmig::model
