// Qwen2, Llama and Mistral through the decoder tower (decoder.h) Qwen3 runs on: what each family's config.json says
// and which projections, biases and norms the tower then has. Their numbers against transformers are hf_parity's
// (tests/hf/llama_folder.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/error.h"
#include "model/bert.h"
#include "model/bert_config.h"
#include "model/lora.h"

namespace ragmig::model {
namespace decoders_test {

using nlohmann::json;

std::vector<std::string> parameter_names(const BertConfig& c) {
  std::vector<std::string> names;
  for (const auto& p : BertModel(c)->named_parameters()) names.push_back(p.key());
  return names;
}

json small(const char* model_type) {
  return {{"model_type", model_type},    {"vocab_size", 40},        {"hidden_size", 16},
          {"num_hidden_layers", 1},      {"num_attention_heads", 4}, {"num_key_value_heads", 2},
          {"intermediate_size", 24},     {"max_position_embeddings", 64}};
}

void expect_refused(json config, const std::string& key, json value, const std::string& says) {
  config[key] = std::move(value);
  try {
    bert_config_from_json(config, "config.json");
    ADD_FAILURE() << key << " accepted in " << config["model_type"];
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(says)) << key;
  }
}

TEST(Decoders, EachFamilyHasItsBiasesAndNorms) {
  const BertConfig qwen2 = bert_config_from_json(small("qwen2"), "config.json");
  EXPECT_TRUE(qwen2.is_decoder());
  EXPECT_EQ(qwen2.decoder.head_dim, 4) << "hidden / heads where head_dim is absent";
  auto names = parameter_names(qwen2);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"layers.0.self_attn.q_proj.bias", "layers.0.self_attn.k_proj.bias",
                                              "layers.0.self_attn.v_proj.bias"}));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("layers.0.self_attn.o_proj.bias"))) << "Qwen2Attention's";
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("layers.0.self_attn.q_norm.weight"))) << "Qwen3's only";

  names = parameter_names(bert_config_from_json(small("mistral"), "config.json"));
  EXPECT_EQ(names.size(), 2u + 9) << "per layer: 4 projections, 3 MLP matrices, 2 norms; no biases";
  EXPECT_THAT(names, ::testing::Contains("layers.0.mlp.gate_proj.weight"));

  json llama = small("llama");
  llama["attention_bias"] = true;
  llama["mlp_bias"] = true;
  names = parameter_names(bert_config_from_json(llama, "config.json"));
  EXPECT_THAT(names, ::testing::IsSupersetOf({"layers.0.self_attn.q_proj.bias", "layers.0.self_attn.o_proj.bias",
                                              "layers.0.mlp.gate_proj.bias", "layers.0.mlp.down_proj.bias"}));
  EXPECT_EQ(names.size(), 2u + 16);

  json qwen3 = small("qwen3");
  qwen3["head_dim"] = 8;
  EXPECT_THAT(parameter_names(bert_config_from_json(qwen3, "config.json")),
              ::testing::Contains("layers.0.self_attn.k_norm.weight"));
  for (const char* type : {"qwen2", "llama", "mistral"})
    EXPECT_EQ(default_lora_targets(type), (std::vector<std::string>{"q_proj", "k_proj", "v_proj"})) << type;
}

TEST(Decoders, ConfigsGoBothWays) {
  json llama = small("llama");
  llama["mlp_bias"] = true;
  llama["head_dim"] = 8;
  llama["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 500000.0}};
  json mistral = small("mistral");
  mistral["sliding_window"] = nullptr;
  for (const json& j : {small("qwen2"), llama, small("mistral"), mistral}) {
    const BertConfig c = bert_config_from_json(j, "config.json");
    const json written = to_json(c);
    EXPECT_EQ(bert_config_from_json(written, "config.json"), c) << j.dump();
    EXPECT_EQ(written["model_type"], j["model_type"]);
  }
  const BertConfig read = bert_config_from_json(llama, "config.json");
  EXPECT_EQ(read.decoder.rope_theta, 500000.0);
  EXPECT_EQ(read.query_width(), 32) << "4 heads of head_dim 8 over a hidden size of 16";
  EXPECT_EQ(to_json(read)["architectures"], json::array({"LlamaModel"}));
  EXPECT_EQ(to_json(bert_config_from_json(small("qwen2"), "c"))["architectures"], json::array({"Qwen2Model"}));
  EXPECT_EQ(bert_config_from_json(mistral, "config.json").max_tokens(), 64) << "no window";
}

// e5-mistral-7b-instruct's config.json (what differs from MistralConfig's defaults): its window of 4096 bounds the
// input, within which causal attention is Mistral's.
TEST(Decoders, MistralsWindowBoundsTheInput) {
  const json e5_mistral = json::parse(R"({"architectures": ["MistralModel"], "model_type": "mistral",
      "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768, "num_attention_heads": 32,
      "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
      "sliding_window": 4096, "tie_word_embeddings": false, "torch_dtype": "float16", "vocab_size": 32000,
      "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2})");
  const BertConfig c = bert_config_from_json(e5_mistral, "config.json");
  EXPECT_EQ(c.max_tokens(), 4096);
  EXPECT_EQ(c.decoder.head_dim, 128);
  EXPECT_EQ(c.key_width(), 1024);
  EXPECT_EQ(c.layer_norm_eps, 1e-5);
  EXPECT_FALSE(c.decoder.qkv_bias || c.decoder.output_bias || c.decoder.mlp_bias || c.decoder.qk_norm);
  EXPECT_EQ(to_json(c)["sliding_window"], 4096);
}

TEST(Decoders, WhatTheTowerDoesNotComputeIsRefusedByKey) {
  const json qwen2 = small("qwen2"), llama = small("llama"), mistral = small("mistral");
  expect_refused(qwen2, "use_sliding_window", true, "key \"use_sliding_window\"");
  expect_refused(qwen2, "auto_map", {{"AutoModel", "modeling_qwen.Qwen2Model"}}, "key \"auto_map\": names custom");
  expect_refused(llama, "is_causal", false, "key \"is_causal\"");
  expect_refused(llama, "rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}}, "key \"rope_scaling\"");
  expect_refused(llama, "rope_parameters", {{"rope_type", "llama3"}}, "key \"rope_parameters.rope_type\"");
  expect_refused(llama, "rope_parameters", {{"rope_type", "default"}, {"partial_rotary_factor", 0.5}},
                 "key \"rope_parameters.partial_rotary_factor\"");
  expect_refused(llama, "hidden_act", "gelu", "key \"hidden_act\": \"gelu\" is not supported (llama: \"silu\")");
  expect_refused(llama, "mlp_bias", "yes", "key \"mlp_bias\": expected true or false");
  expect_refused(mistral, "layer_types", {"full_attention"}, "key \"layer_types\"");
  expect_refused(mistral, "sliding_window", -1, "key \"sliding_window\"");
  expect_refused(mistral, "num_key_value_heads", 3, "key \"num_key_value_heads\": 3 does not divide");
  expect_refused(small("falcon"), "vocab_size", 40, "\"falcon\" is not supported");
}

}  // namespace decoders_test
}  // namespace ragmig::model
