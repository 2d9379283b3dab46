// Qwen3's parts without Python (transformers' outputs: tests/hf): HF's parameter names and shapes (grouped key/value
// heads, head_dim apart from hidden_size), causality, padding on the right, last-token pooling wherever the padding
// is, config.json both ways and its refusals, the FLOP count.
#include "model/decoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/bert.h"
#include "model/dual_encoder.h"
#include "model/embed.h"
#include "model/encoder_flops.h"
#include "model/lora.h"
#include "model/model_folder.h"
#include "model/torch_safetensors.h"
#include "support/byte_level_tokenizers.h"
#include "support/test_support.h"

namespace ragmig::model {
namespace qwen3_test {

BertConfig small_config() {
  BertConfig c;
  c.model_type = "qwen3";
  c.decoder.qk_norm = true;
  c.vocab_size = 50;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 24;
  c.hidden_act = "silu";
  c.max_position_embeddings = 32;
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-6;
  c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.0;
  c.decoder.num_key_value_heads = 2;
  c.decoder.head_dim = 8;  // 4 x 8 = 32 wide queries over a hidden size of 16
  c.initializer_range = 0.3;
  return c;
}

TEST(Qwen3, ParametersHaveTransformersNamesAndShapes) {
  torch::manual_seed(1);
  BertModel tower(small_config());
  EXPECT_FALSE(tower->embeddings) << "no BERT parts";
  const auto params = tower->named_parameters();
  std::vector<std::string> names;
  for (const auto& p : params) names.push_back(p.key());
  EXPECT_THAT(names, ::testing::Contains("embed_tokens.weight"));
  EXPECT_THAT(names, ::testing::Contains("layers.1.self_attn.k_norm.weight"));
  EXPECT_THAT(names, ::testing::Contains("layers.1.post_attention_layernorm.weight"));
  EXPECT_EQ(names.back(), "norm.weight");
  EXPECT_EQ(names.size(), 2u + 2 * 11) << "per layer: 4 projections, 2 head norms, 3 MLP matrices, 2 norms";
  EXPECT_EQ(params["layers.0.self_attn.q_proj.weight"].sizes(), (std::vector<int64_t>{32, 16}));
  EXPECT_EQ(params["layers.0.self_attn.k_proj.weight"].sizes(), (std::vector<int64_t>{16, 16})) << "2 heads of 8";
  EXPECT_EQ(params["layers.0.self_attn.o_proj.weight"].sizes(), (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(params["layers.0.self_attn.q_norm.weight"].sizes(), (std::vector<int64_t>{8}));
  EXPECT_EQ(params.find("layers.0.self_attn.q_proj.bias"), nullptr) << "attention_bias false";
  BertConfig biased = small_config();
  biased.decoder.qkv_bias = biased.decoder.output_bias = true;
  EXPECT_NE(BertModel(biased)->named_parameters().find("layers.0.self_attn.o_proj.bias"), nullptr);
  EXPECT_EQ(default_lora_targets("qwen3"), (std::vector<std::string>{"q_proj", "k_proj", "v_proj"}));
  double weights = 0;
  for (const auto& p : params) weights += static_cast<double>(p.value().numel());
  EXPECT_LE(tower->config().minimum_weight_count(), weights) << "a lower bound";
  EXPECT_GT(tower->config().minimum_weight_count(), 0.95 * weights) << "all but the norms";
}

// A token sees the tokens before it only: a later token changed leaves the earlier states as they were; and a row
// padded on the right has its real tokens' states of the row alone.
TEST(Qwen3, TokensSeeOnlyTheRealTokensBeforeThem) {
  torch::manual_seed(2);
  BertModel tower(small_config());
  tower->eval();
  torch::NoGradGuard no_grad;
  const auto ids = torch::tensor({{5, 9, 3, 7, 11}}, torch::kLong);
  const auto ones = torch::ones_like(ids);
  const auto base = tower->forward(ids, ones);
  auto changed = ids.clone();
  changed[0][4] = 20;
  const auto other = tower->forward(changed, ones);
  EXPECT_TRUE(torch::allclose(base.narrow(1, 0, 4), other.narrow(1, 0, 4), 0, 0)) << "tokens 0-3 do not see token 4";
  EXPECT_FALSE(torch::allclose(base.narrow(1, 4, 1), other.narrow(1, 4, 1)));

  const auto batch = torch::tensor({{5, 9, 3, 7, 11}, {5, 9, 3, 0, 0}}, torch::kLong);
  const auto mask = torch::tensor({{1, 1, 1, 1, 1}, {1, 1, 1, 0, 0}}, torch::kLong);
  const auto padded = tower->forward(batch, mask);
  const auto alone = tower->forward(batch[1].narrow(0, 0, 3).unsqueeze(0), torch::ones({1, 3}, torch::kLong));
  EXPECT_TRUE(torch::allclose(padded[1].narrow(0, 0, 3), alone[0], 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(padded[0], base[0], 1e-5, 1e-6));
}

// SDPA's causal path and the manual path (an explicit causal mask; what runs without SDPA or with CPU dropout)
// compute the same states.
TEST(Qwen3, CausalSdpaAndTheManualPathAgree) {
  if (!fused_attention_available()) GTEST_SKIP() << "no SDPA in this LibTorch";
  torch::manual_seed(3);
  BertModel tower(small_config());
  tower->eval();
  torch::NoGradGuard no_grad;
  const auto ids = torch::randint(1, 50, {3, 7}, torch::kLong);
  const auto mask = torch::ones_like(ids);
  const auto fused = tower->forward(ids, mask);
  tower->set_attention_impl(AttentionImpl::Manual);
  EXPECT_TRUE(torch::allclose(tower->forward(ids, mask), fused, 1e-5, 1e-6));
}

TEST(Qwen3, LastTokenPoolingTakesEachRowsLastRealTokenWhereverThePaddingIs) {
  const auto hidden = torch::arange(2 * 4 * 3, torch::kFloat).view({2, 4, 3});
  const auto right = torch::tensor({{1, 1, 0, 0}, {1, 1, 1, 1}}, torch::kLong);
  EXPECT_TRUE(torch::equal(pool(hidden, right, Pooling::LastToken), torch::stack({hidden[0][1], hidden[1][3]})));
  const auto left = torch::tensor({{0, 0, 1, 1}, {0, 1, 1, 1}}, torch::kLong);
  EXPECT_TRUE(torch::equal(pool(hidden, left, Pooling::LastToken), torch::stack({hidden[0][3], hidden[1][3]})));
  EXPECT_EQ(parse_pooling("lasttoken"), Pooling::LastToken);
}

TEST(Qwen3, ConfigJsonBothWaysAndItsRefusals) {
  BertConfig c = small_config();
  c.decoder.rope_theta = 1e6;
  const auto j = to_json(c);
  EXPECT_EQ(j["architectures"], nlohmann::json::array({"Qwen3Model"}));
  EXPECT_EQ(j["rms_norm_eps"], 1e-6);
  EXPECT_EQ(bert_config_from_json(j, "config.json"), c);

  // Qwen3-Embedding-0.6B's config.json as transformers 4 wrote it (what differs from Qwen3Config's defaults).
  const auto real = nlohmann::json::parse(R"({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"],
      "vocab_size": 151669, "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28,
      "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 32768,
      "rope_theta": 1000000, "rope_scaling": null, "rms_norm_eps": 1e-06, "tie_word_embeddings": true,
      "use_sliding_window": false, "sliding_window": null, "max_window_layers": 28, "torch_dtype": "bfloat16"})");
  const BertConfig read = bert_config_from_json(real, "config.json");
  EXPECT_EQ(read.decoder.num_key_value_heads, 8);
  EXPECT_EQ(read.decoder.rope_theta, 1e6);
  EXPECT_EQ(read.query_width(), 2048);
  EXPECT_EQ(read.key_width(), 1024);
  EXPECT_EQ(read.max_tokens(), 32768);

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
  refused("num_key_value_heads", 5, "key \"num_key_value_heads\": 5 does not divide num_attention_heads 16");
  refused("head_dim", 7, "key \"head_dim\"");
  refused("rope_scaling", {{"rope_type", "yarn"}}, "key \"rope_scaling\"");
  refused("rope_parameters", {{"rope_type", "linear"}, {"rope_theta", 1}}, "key \"rope_parameters.rope_type\"");
  refused("use_sliding_window", true, "key \"use_sliding_window\"");
  refused("layer_types", {"full_attention", "sliding_attention"}, "key \"layer_types\"");
  refused("hidden_act", "gelu", "key \"hidden_act\"");
  refused("rms_norm_eps", 0, "key \"rms_norm_eps\"");
}

// Qwen3-Embedding's checkpoints are Qwen3ForCausalLM's: the model under "model.", and an lm_head beside it (when
// not tied). Such a folder loads as the Qwen3Model ragmig wrote, the head ignored.
TEST(Qwen3, ACausalLmCheckpointLoadsItsModelAndIgnoresTheHead) {
  testing::ScratchDir dir;
  BertConfig c = small_config();
  c.vocab_size = 257;
  EncoderSpec spec;
  spec.bert = c;
  spec.pooling = Pooling::LastToken;
  torch::manual_seed(4);
  DualEncoder net(spec);
  save_model_folder(dir.path().string(), net, testing::qwen_style_tokenizer());
  const std::string weights = (dir / "model.safetensors").string();
  std::map<std::string, torch::Tensor> causal_lm;
  for (auto& [name, tensor] : load_tensors(weights)) causal_lm["model." + name] = tensor;
  causal_lm["lm_head.weight"] = torch::randn({257, 16});
  save_tensors(weights, causal_lm, {{"format", "pt"}});
  const LoadedModel loaded = load_model_folder(dir.path().string());
  EXPECT_EQ(loaded.model->spec().pooling, Pooling::LastToken);
  const auto mine = loaded.model->named_parameters();
  for (const auto& p : net->named_parameters()) EXPECT_TRUE(torch::equal(mine[p.key()], p.value())) << p.key();
  EXPECT_FALSE(loaded.tokenizer.cls_first);
}

// The framings of byte-level decoders' tokenizer.json post-processors: Qwen3-Embedding's $A <|endoftext|>, Qwen3-Base's
// ByteLevel (nothing added: an empty text gives no ids, and a batch of them one column of padding), Llama 3's
// <|begin_of_text|> $A in a Sequence after a ByteLevel; each written back as read. What the post-processor cannot
// say is refused by key.
TEST(Qwen3, BaseAndLlama3FramingsReadAndWriteBack) {
  testing::ScratchDir dir;
  BertConfig c = small_config();
  c.vocab_size = 258;
  EncoderSpec spec;
  spec.bert = c;
  DualEncoder net(spec);
  text::TokenizerSpec qwen = testing::qwen_style_tokenizer();
  qwen.vocab.push_back("<|begin_of_text|>");  // id 257
  const std::filesystem::path folder = dir / "model";
  save_model_folder(folder.string(), net, qwen);
  const auto tj = nlohmann::json::parse(read_file(folder / "tokenizer.json"));
  const auto framed = [&](const nlohmann::json& post) {
    auto edited = tj;
    edited["post_processor"] = post;
    write_file_atomic(folder / "tokenizer.json", edited.dump());
    return load_model_folder(folder.string()).tokenizer;
  };
  const nlohmann::json template_ = {{"type", "TemplateProcessing"},
                                    {"single",
                                     {{{"SpecialToken", {{"id", "<|begin_of_text|>"}, {"type_id", 0}}}},
                                      {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                                    {"pair", nlohmann::json::array()},
                                    {"special_tokens", nlohmann::json::object()}};
  const nlohmann::json byte_level = {{"type", "ByteLevel"}, {"trim_offsets", false}};
  for (const auto& post : {byte_level, nlohmann::json()}) {
    const text::TokenizerSpec base = framed(post);
    EXPECT_FALSE(base.cls_first || base.sep_last) << post.dump();
    EXPECT_EQ(base.special.sep, "<|endoftext|>") << "tokenizer_config.json's eos_token, named though never added";
    const auto tokenizer = text::make_tokenizer(base);
    EXPECT_EQ(tokenizer->encode("", 8), std::vector<int32_t>{});
    EXPECT_EQ(tokenizer->encode("ab", 8).size(), 2u);
  }
  const text::TokenizerSpec llama3 = framed({{"type", "Sequence"}, {"processors", {byte_level, template_}}});
  EXPECT_TRUE(llama3.cls_first);
  EXPECT_FALSE(llama3.sep_last);
  EXPECT_EQ(llama3.special.cls, "<|begin_of_text|>");
  EXPECT_EQ(text::make_tokenizer(llama3)->encode("", 8), std::vector<int32_t>{257});

  // Embedded: an empty text pools (mean) to zeros beside the others, as transformers' padded rows do.
  spec.pooling = Pooling::Mean;
  spec.normalize = false;
  DualEncoder mean(spec);
  const text::TokenizerSpec base = framed(byte_level);
  const auto tokenizer = text::make_tokenizer(base);
  const auto embed = [&](const std::vector<std::string>& texts) {
    return embed_texts(mean, *tokenizer, texts, false, 16, 8, torch::kCPU);
  };
  const auto embedded = embed({"", "ab"});
  ASSERT_EQ(embedded.size(0), 2);
  EXPECT_TRUE(torch::equal(embedded[0], torch::zeros_like(embedded[0])));
  EXPECT_GT(embedded[1].abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(torch::equal(embed({""}), torch::zeros({1, 16}))) << "a batch of empty texts alone";

  // Written back as read.
  for (const text::TokenizerSpec& t : {base, llama3, qwen}) {
    save_model_folder(folder.string(), net, t);
    EXPECT_EQ(load_model_folder(folder.string()).tokenizer, t) << t.cls_first << t.sep_last;
  }
  const auto tc = nlohmann::json::parse(read_file(folder / "tokenizer_config.json"));
  EXPECT_FALSE(tc.contains("bos_token")) << "Qwen names none";
  save_model_folder(folder.string(), net, llama3);
  EXPECT_EQ(nlohmann::json::parse(read_file(folder / "tokenizer_config.json"))["bos_token"], "<|begin_of_text|>");

  for (const auto& [post, message] : std::vector<std::pair<nlohmann::json, std::string>>{
           {{{"type", "RobertaProcessing"}}, "expected a TemplateProcessing, a ByteLevel or null"},
           {{{"type", "Sequence"}, {"processors", {template_, {{"type", "RobertaProcessing"}}}}},
            "expected a Sequence of ByteLevel processors and one TemplateProcessing"},
           {{{"type", "Sequence"}, {"processors", 3}}, "key \"post_processor\".processors: expected an array"}}) {
    try {
      framed(post);
      ADD_FAILURE() << "took " << post.dump();
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(message));
      EXPECT_THAT(e.what(), ::testing::HasSubstr("tokenizer.json"));
    }
  }
}

// Qwen3-Embedding-0.6B at 128 tokens: q and o 1024 x 2048, k and v 1024 x 1024, a gated MLP of 3072, attention over
// 16 heads of 128.
TEST(Qwen3, FlopsCountGroupedHeadsAndTheGatedMlp) {
  BertConfig c = small_config();
  c.hidden_size = 1024;
  c.num_hidden_layers = 28;
  c.num_attention_heads = 16;
  c.intermediate_size = 3072;
  c.decoder.num_key_value_heads = 8;
  c.decoder.head_dim = 128;
  const double l = 128, per_layer = 2 * l * 1024 * (2 * 2048 + 2 * 1024) + 2 * l * 3 * 1024 * 3072 + 4 * l * l * 2048;
  EXPECT_DOUBLE_EQ(encoder_flops(c, 128), 28 * per_layer);
}

}  // namespace qwen3_test
}  // namespace ragmig::model
