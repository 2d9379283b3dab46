// ModernBERT's parts without Python (transformers' outputs: tests/hf): HF's parameter names, the sliding window and
// padding masks, rotary positions, padding invariance, HF's initialisation, and LoRA's default targets.
#include "model/modernbert.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "model/bert.h"
#include "model/local_attention.h"
#include "model/lora.h"

namespace ragmig::model {
namespace modernbert_test {

BertConfig small_config(std::vector<bool> sliding, bool biases) {
  BertConfig c;
  c.model_type = "modernbert";
  c.vocab_size = 50;
  c.hidden_size = 16;
  c.num_attention_heads = 2;
  c.intermediate_size = 24;
  c.num_hidden_layers = static_cast<int64_t>(sliding.size());
  c.max_position_embeddings = 64;
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-5;
  c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.0;
  c.pad_token_id = 0;
  c.modernbert.sliding_layers = std::move(sliding);
  c.modernbert.local_attention = 4;  // two tokens each side
  c.modernbert.norm_bias = c.modernbert.attention_bias = c.modernbert.mlp_bias = biases;
  return c;
}

TEST(ModernBert, ParametersHaveTransformersNames) {
  BertModel tower(small_config({false, true}, false));
  EXPECT_FALSE(tower->embeddings) << "no BERT parts";
  std::vector<std::string> names;
  for (const auto& p : tower->named_parameters()) names.push_back(p.key());
  const std::vector<std::string> expected = {
      "embeddings.tok_embeddings.weight", "embeddings.norm.weight", "layers.0.attn.Wqkv.weight",
      "layers.0.attn.Wo.weight",          "layers.0.mlp_norm.weight", "layers.0.mlp.Wi.weight",
      "layers.0.mlp.Wo.weight",           "layers.1.attn_norm.weight", "layers.1.attn.Wqkv.weight",
      "layers.1.attn.Wo.weight",          "layers.1.mlp_norm.weight", "layers.1.mlp.Wi.weight",
      "layers.1.mlp.Wo.weight",           "final_norm.weight"};
  EXPECT_EQ(names, expected) << "layer 0 has no attn_norm; no biases without norm_bias / attention_bias / mlp_bias";
  BertModel biased(small_config({false}, true));
  EXPECT_NE(biased->named_parameters().find("final_norm.bias"), nullptr);
  EXPECT_NE(biased->named_parameters().find("layers.0.attn.Wqkv.bias"), nullptr);
  EXPECT_EQ(biased->named_parameters()["layers.0.mlp.Wi.weight"].sizes(), (std::vector<int64_t>{48, 16}))
      << "Wi holds the input and the gate";
}

TEST(ModernBert, SlidingWindowMaskKeepsTheWindowAndMasksPadding) {
  const auto mask = torch::tensor({1, 1, 1, 1, 0}, torch::kLong).view({1, 5});
  const auto bias = sliding_window_mask(mask, 1, torch::kFloat);
  ASSERT_EQ(bias.sizes(), (std::vector<int64_t>{1, 1, 5, 5}));
  const float lowest = std::numeric_limits<float>::lowest();
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 5; ++j)
      EXPECT_EQ(bias[0][0][i][j].item<float>(), (std::abs(i - j) <= 1 && j < 4) ? 0.0f : lowest) << i << "," << j;
}

TEST(ModernBert, RotaryPositionZeroIsTheIdentityAndRotationsKeepNorms) {
  const auto tables = rotary_tables(6, 8, 10000.0, torch::kCPU);
  ASSERT_EQ(tables.cos.sizes(), (std::vector<int64_t>{6, 8}));
  torch::manual_seed(3);
  const auto x = torch::randn({1, 2, 6, 8});
  const auto r = apply_rotary(x, tables);
  EXPECT_TRUE(torch::allclose(r.select(2, 0), x.select(2, 0)));
  // Each (i, i + 4) pair turns by an angle: its length stays.
  const auto pair_norms = [](const torch::Tensor& t) {
    return (t.narrow(-1, 0, 4).pow(2) + t.narrow(-1, 4, 4).pow(2)).sqrt();
  };
  EXPECT_TRUE(torch::allclose(pair_norms(r), pair_norms(x), 1e-5, 1e-6));
  EXPECT_GT((r - x).abs().max().item<float>(), 0.1f);
}

TEST(ModernBert, PackedRotaryTablesRotateAsThePaddedRows) {
  torch::manual_seed(2);
  const int64_t b = 3, l = 9, heads = 2, head_dim = 8;
  const auto tables = rotary_tables(l, head_dim, 160000.0, torch::kCPU);
  auto mask = torch::ones({b, l}, torch::kLong);
  mask[0].slice(0, 5).fill_(0);  // right padding
  mask[2].slice(0, 0, 3).fill_(0);  // left padding: its tokens keep their columns' positions
  const Packing packing = make_packing(mask);
  const auto x = torch::randn({b, heads, l, head_dim});
  const auto padded = apply_rotary(x, tables).transpose(1, 2);  // [B, L, heads, head_dim]
  const auto packed = apply_rotary(pack(x.transpose(1, 2), packing), packed_rotary_tables(tables, packing));
  ASSERT_EQ(packed.sizes(), (std::vector<int64_t>{packing.index.size(0), heads, head_dim}));
  EXPECT_TRUE(torch::equal(packed, pack(padded, packing)));
}

// local_attention.h: the blocked layout gives the full masked attention's outputs and gradients on real tokens.
TEST(ModernBert, LocalBlocksAttendAsTheFullSlidingMask) {
  torch::manual_seed(8);
  for (const auto& [b, l, w] : {std::tuple{2, 37, 4}, std::tuple{3, 72, 8}, std::tuple{1, 19, 2}}) {
    ASSERT_TRUE(local_blocks_pay(l, w));
    auto mask = torch::ones({b, l}, torch::kLong);
    mask[0].slice(0, l - 5).fill_(0);  // right padding
    if (b > 2) mask[2].slice(0, 0, 3).fill_(0);  // left padding
    const auto q = torch::randn({b, 2, l, 8}, torch::requires_grad());
    const auto k = torch::randn({b, 2, l, 8}, torch::requires_grad());
    const auto v = torch::randn({b, 2, l, 8}, torch::requires_grad());
    const auto attend = [](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const torch::Tensor& bias) {
      return torch::softmax(torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(8.0) + bias, -1).matmul(v);
    };
    const auto full = attend(q, k, v, sliding_window_mask(mask, w, torch::kFloat));
    const auto blocked = from_query_blocks(
        attend(query_blocks(q, w), key_blocks(k, w), key_blocks(v, w), local_block_bias(mask, w, torch::kFloat)), b, l);
    ASSERT_EQ(blocked.sizes(), full.sizes());
    const auto real = mask.view({b, 1, l, 1}).to(torch::kBool).expand_as(full);
    EXPECT_TRUE(torch::allclose(blocked.masked_select(real), full.masked_select(real), 1e-5, 1e-6)) << l << " " << w;
    const auto direction = torch::randn_like(full) * real;  // a loss on the real tokens only
    const auto grads = [&](const torch::Tensor& out) {
      return torch::autograd::grad({(out * direction).sum()}, {q, k, v});
    };
    const auto gf = grads(full), gb = grads(blocked);
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(torch::allclose(gb[i], gf[i], 1e-5, 1e-6)) << "gradient " << i;
  }
  EXPECT_FALSE(local_blocks_pay(32, 4)) << "eight blocks: the copies cost more than the keys skipped";
  EXPECT_FALSE(local_blocks_pay(100, 0));
}

TEST(ModernBert, RealTokensDoNotSeePaddingOrTokensOutsideTheirWindow) {
  torch::manual_seed(5);
  BertModel tower(small_config({true}, true));  // one sliding layer: token i sees i-2 .. i+2
  tower->eval();
  torch::NoGradGuard no_grad;
  const auto ids = torch::randint(1, 50, {1, 10}, torch::kLong);
  const auto ones = torch::ones({1, 10}, torch::kLong);
  const auto out = tower->forward(ids, ones);
  auto far = ids.clone();
  far[0][9] = (ids[0][9].item<int64_t>() % 49) + 1;  // 9 is outside token 5's window, inside token 7's
  const auto changed = tower->forward(far, ones);
  EXPECT_TRUE(torch::allclose(changed[0].slice(0, 0, 7), out[0].slice(0, 0, 7), 1e-5, 1e-6));
  EXPECT_GT((changed[0][7] - out[0][7]).abs().max().item<float>(), 1e-4);

  // Padded to 14 with other ids: the real tokens' states are the same, in both attention implementations.
  for (const AttentionImpl impl : {AttentionImpl::Manual, AttentionImpl::Fused}) {
    tower->set_attention_impl(impl);
    auto padded = torch::cat({ids, torch::randint(1, 50, {1, 4}, torch::kLong)}, 1);
    auto mask = torch::cat({ones, torch::zeros({1, 4}, torch::kLong)}, 1);
    EXPECT_TRUE(torch::allclose(tower->forward(padded, mask)[0].slice(0, 0, 10), out[0], 1e-5, 1e-6));
  }
}

TEST(ModernBert, UnpaddedIsPaddedOnTheRealTokensAndZeroAtThePadding) {
  torch::manual_seed(6);
  BertModel tower(small_config({false, true, true}, true));
  torch::NoGradGuard no_grad;
  for (auto& p : tower->parameters()) p.add_(torch::randn_like(p) * 0.2);
  tower->eval();
  const auto ids = torch::randint(1, 50, {3, 12}, torch::kLong);
  auto mask = torch::ones({3, 12}, torch::kLong);
  mask[1].slice(0, 7).fill_(0);
  mask[2].slice(0, 2).fill_(0);
  const auto padded = tower->forward(ids, mask);
  tower->set_unpad(true);
  const auto unpadded = tower->forward(ids, mask);
  const auto real = mask.unsqueeze(-1).to(torch::kBool);
  EXPECT_TRUE(torch::allclose(unpadded.masked_select(real), padded.masked_select(real), 1e-5, 1e-6));
  EXPECT_EQ(unpadded.masked_select(real.logical_not()).abs().max().item<float>(), 0.0f);
}

TEST(ModernBert, InitialisationIsTransformersTruncatedNormals) {
  torch::manual_seed(1);
  BertConfig c = small_config({false, true, true, false}, true);
  c.hidden_size = 64;
  c.intermediate_size = 96;
  BertModel tower(c);
  const auto params = tower->named_parameters();
  const auto wqkv = params["layers.1.attn.Wqkv.weight"], wo = params["layers.1.attn.Wo.weight"];
  EXPECT_LE(wqkv.abs().max().item<double>(), 2 * 0.02 + 1e-9) << "truncated at 2 std";
  const double out_std = 0.02 / std::sqrt(8.0);
  EXPECT_LE(wo.abs().max().item<double>(), 2 * out_std + 1e-9);
  EXPECT_NEAR(wqkv.std().item<double>(), 0.02 * 0.88, 0.003) << "a normal truncated at 2 std has 0.88 std";
  EXPECT_TRUE(torch::equal(params["final_norm.weight"], torch::ones({64})));
  EXPECT_TRUE(torch::equal(params["layers.2.attn.Wqkv.bias"], torch::zeros({192})));
}

TEST(ModernBert, LoraAdaptsWqkvUnlessTold) {
  EXPECT_EQ(default_lora_targets("modernbert"), (std::vector<std::string>{"Wqkv"}));
  EXPECT_EQ(default_lora_targets("bert"), (std::vector<std::string>{"query", "key", "value"}));
  BertModel tower(small_config({false, true}, false));
  LoraSpec spec;
  spec.rank = 2;
  spec.targets = default_lora_targets("modernbert");
  EXPECT_EQ(attach_lora(tower, spec), 2 * (2 * 16 + 48 * 2));
  spec.targets = {"query"};
  BertModel other(small_config({false}, false));
  EXPECT_THROW(attach_lora(other, spec), ConfigError) << "BERT's names match nothing in ModernBERT";
}

}  // namespace modernbert_test
}  // namespace ragmig::model
