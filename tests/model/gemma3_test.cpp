// Gemma 3's parts without Python (transformers' outputs: tests/hf): HF's parameter names and shapes (four norms a
// layer, grouped key/value heads, head_dim apart from hidden_size), attention both ways within each sliding layer's
// window and over the whole input in global layers, padding, SDPA against the manual path, config.json both ways and
// its refusals, the FLOP count.
#include "model/gemma3.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/bert.h"
#include "model/encoder_flops.h"
#include "model/lora.h"

namespace ragmig::model {
namespace gemma3_test {

// One layer per entry of `sliding` (true: a sliding layer of window 4, seeing 2 tokens each side).
BertConfig small_config(std::vector<bool> sliding = {true, false}) {
  BertConfig c;
  c.model_type = "gemma3_text";
  c.vocab_size = 50;
  c.hidden_size = 16;
  c.num_hidden_layers = static_cast<int64_t>(sliding.size());
  c.num_attention_heads = 4;
  c.intermediate_size = 24;
  c.hidden_act = "gelu_pytorch_tanh";
  c.max_position_embeddings = 64;
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-6;
  c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.0;
  c.initializer_range = 0.3;
  Gemma3Options& g = c.gemma3;
  g.num_key_value_heads = 2;
  g.head_dim = 8;  // 4 x 8 = 32 wide queries over a hidden size of 16
  g.query_pre_attn_scalar = 12;
  g.sliding_window = 4;
  g.sliding_layers = std::move(sliding);
  return c;
}

// HF initialises Gemma's norms to zero weights (scale 1 + 0); random ones make every norm matter.
BertModel random_tower(const BertConfig& c, uint64_t seed) {
  torch::manual_seed(seed);
  BertModel tower(c);
  torch::NoGradGuard no_grad;
  for (auto& p : tower->named_parameters())
    if (p.key().find("norm") != std::string::npos) p.value().normal_(0.0, 0.3);
  tower->eval();
  return tower;
}

TEST(Gemma3, ParametersHaveTransformersNamesAndShapes) {
  torch::manual_seed(1);
  BertModel tower(small_config());
  EXPECT_FALSE(tower->embeddings) << "no BERT parts";
  const auto params = tower->named_parameters();
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.key());
  EXPECT_THAT(names, ::testing::Contains("embed_tokens.weight"));
  EXPECT_THAT(names, ::testing::Contains("layers.1.self_attn.k_norm.weight"));
  EXPECT_THAT(names, ::testing::Contains("layers.1.pre_feedforward_layernorm.weight"));
  EXPECT_THAT(names, ::testing::Contains("layers.1.post_feedforward_layernorm.weight"));
  EXPECT_EQ(names.back(), "norm.weight");
  EXPECT_EQ(names.size(), 2u + 2 * 13) << "per layer: 4 projections, 2 head norms, 3 MLP matrices, 4 norms";
  EXPECT_EQ(params["layers.0.self_attn.q_proj.weight"].sizes(), (std::vector<int64_t>{32, 16}));
  EXPECT_EQ(params["layers.0.self_attn.v_proj.weight"].sizes(), (std::vector<int64_t>{16, 16})) << "2 heads of 8";
  EXPECT_EQ(params["layers.0.self_attn.o_proj.weight"].sizes(), (std::vector<int64_t>{16, 32}));
  EXPECT_TRUE(torch::equal(params["norm.weight"], torch::zeros({16}))) << "HF's init: (1 + 0) scales by 1";
  EXPECT_TRUE(torch::equal(params["embed_tokens.weight"][0], torch::zeros({16}))) << "the padding row";
  EXPECT_EQ(default_lora_targets("gemma3_text"), (std::vector<std::string>{"q_proj", "k_proj", "v_proj"}));
  double weights = 0;
  for (const auto& p : params) weights += static_cast<double>(p.value().numel());
  EXPECT_LE(tower->config().minimum_weight_count(), weights) << "a lower bound";
  EXPECT_GT(tower->config().minimum_weight_count(), 0.9 * weights) << "all but the norms";
}

// A sliding layer's token sees the tokens within sliding_window / 2 on both sides, and nothing further; a global
// layer sees the whole input, both sides. Checked on a short input (the whole product under a mask) and on a
// long one (the blocks of keys of local_attention.h).
TEST(Gemma3, TokensSeeBothSidesWithinTheWindowOfSlidingLayersAndEverythingInGlobalOnes) {
  BertModel sliding = random_tower(small_config({true}), 2);
  BertModel global = random_tower(small_config({false}), 2);
  torch::NoGradGuard no_grad;
  for (const int64_t length : {9, 40}) {
    SCOPED_TRACE(length);
    const auto ids = torch::randint(1, 50, {1, length}, torch::kLong);
    const auto ones = torch::ones_like(ids);
    auto changed = ids.clone();
    const int64_t at = length - 4;
    changed[0][at] = ids[0][at].item<int64_t>() % 49 + 1;
    const auto moved = [&](BertModel& tower) {
      const auto diff = (tower->forward(ids, ones) - tower->forward(changed, ones)).abs().amax(-1)[0];
      std::vector<bool> out;
      for (int64_t i = 0; i < length; ++i) out.push_back(diff[i].item<float>() > 1e-6);
      return out;
    };
    const auto near = moved(sliding);
    for (int64_t i = 0; i < length; ++i) EXPECT_EQ(near[i], std::abs(i - at) <= 2) << "token " << i;
    const auto far = moved(global);
    for (int64_t i = 0; i < length; ++i) EXPECT_TRUE(far[i]) << "token " << i;
  }
}

// Padding changes no real token's state (the mask, not causality, keeps it out), and SDPA and the manual path (what
// runs without SDPA or with CPU dropout) agree.
TEST(Gemma3, PaddingIsMaskedAndSdpaAgreesWithTheManualPath) {
  BertModel tower = random_tower(small_config(), 3);
  torch::NoGradGuard no_grad;
  const auto batch = torch::tensor({{5, 9, 3, 7, 11, 4}, {5, 9, 3, 0, 0, 0}}, torch::kLong);
  const auto mask = torch::tensor({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 0, 0, 0}}, torch::kLong);
  const auto padded = tower->forward(batch, mask);
  const auto alone = tower->forward(batch[1].narrow(0, 0, 3).unsqueeze(0), torch::ones({1, 3}, torch::kLong));
  EXPECT_TRUE(torch::allclose(padded[1].narrow(0, 0, 3), alone[0], 1e-5, 1e-6));
  if (!fused_attention_available()) GTEST_SKIP() << "no SDPA in this LibTorch";
  tower->set_attention_impl(AttentionImpl::Manual);
  const auto manual = tower->forward(batch, mask);
  EXPECT_TRUE(torch::allclose(manual[0], padded[0], 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(manual[1].narrow(0, 0, 3), padded[1].narrow(0, 0, 3), 1e-5, 1e-6));
}

TEST(Gemma3, ConfigJsonBothWaysAndItsRefusals) {
  const BertConfig c = small_config();
  const auto j = to_json(c);
  EXPECT_EQ(j["architectures"], nlohmann::json::array({"Gemma3TextModel"}));
  EXPECT_EQ(j["layer_types"], nlohmann::json::array({"sliding_attention", "full_attention"}));
  EXPECT_EQ(j["use_bidirectional_attention"], true);
  EXPECT_EQ(bert_config_from_json(j, "config.json"), c);

  // EmbeddingGemma-300m's config.json as transformers 4.57 wrote it (no layer_types: every sixth layer global).
  const auto real = nlohmann::json::parse(R"({"architectures": ["Gemma3TextModel"], "attention_bias": false,
      "attention_dropout": 0.0, "attn_logit_softcapping": null, "bos_token_id": 2, "eos_token_id": 1,
      "final_logit_softcapping": null, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 768,
      "initializer_range": 0.02, "intermediate_size": 1152, "max_position_embeddings": 2048,
      "model_type": "gemma3_text", "num_attention_heads": 3, "num_hidden_layers": 24, "num_key_value_heads": 1,
      "pad_token_id": 0, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000.0,
      "rope_scaling": null, "rope_theta": 1000000.0, "sliding_window": 512, "torch_dtype": "float32",
      "use_bidirectional_attention": true, "use_cache": true, "vocab_size": 262144})");
  const BertConfig read = bert_config_from_json(real, "config.json");
  EXPECT_EQ(read.gemma3.num_key_value_heads, 1);
  EXPECT_EQ(read.query_width(), 768);
  EXPECT_EQ(read.key_width(), 256);
  EXPECT_EQ(read.half_window(), 256);
  EXPECT_EQ(read.gemma3.rope_theta, 1e6);
  EXPECT_EQ(read.gemma3.rope_local_theta, 1e4);
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(read.sliding_layer(i), i % 6 != 5) << "layer " << i;
  EXPECT_EQ(bert_config_from_json(to_json(read), "config.json"), read);

  const auto refused = [&](const char* key, nlohmann::json value, const std::string& says) {
    auto bad = real;
    bad[key] = std::move(value);
    try {
      bert_config_from_json(bad, "config.json");
      ADD_FAILURE() << key << " accepted";
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(says)) << key;
    }
  };
  refused("use_bidirectional_attention", false, "key \"use_bidirectional_attention\": false is not supported");
  refused("attn_logit_softcapping", 50.0, "key \"attn_logit_softcapping\"");
  refused("rope_scaling", {{"rope_type", "linear"}, {"factor", 8}}, "key \"rope_scaling\"");
  refused("num_key_value_heads", 2, "key \"num_key_value_heads\": 2 does not divide num_attention_heads 3");
  refused("layer_types", {"full_attention"}, "key \"layer_types\": 1 layer types for 24 layers");
  refused("layer_types", {"chunked_attention"}, "key \"layer_types\": expected");
  refused("hidden_activation", "gelu", "key \"hidden_activation\"");
  refused("query_pre_attn_scalar", 256.5, "key \"query_pre_attn_scalar\": expected an integer");
  refused("sliding_window", 0, "key \"sliding_window\": must be positive");
  refused("sliding_window_pattern", 0, "key \"sliding_window_pattern\"");
}

// Sliding layers count the keys within their window, global ones all: 4 layers at 2,048 tokens, 1 global.
TEST(Gemma3, FlopsCountEachSlidingLayersWindow) {
  BertConfig c = small_config({true, true, true, false});
  const double l = 2048, h = 16, i = 24, q = 32, kv = 16;
  const double per_layer = 4 * l * h * (q + kv) + 6 * l * h * i;
  EXPECT_DOUBLE_EQ(encoder_flops(c, 2048), 4 * per_layer + 3 * 4 * l * 5 * q + 4 * l * l * q);
}

}  // namespace gemma3_test
}  // namespace ragmig::model
