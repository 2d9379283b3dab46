// Tests of the BERT encoder: Hugging Face parameter names, HF initialisation, the attention mask, dropout,
// bf16 autocast (fused attention against the manual path: tests/eval/test_perf.cpp).
#include "model/bert.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "model/dual_encoder.h"
#include "support/tiny_bert.h"
#include "train/autocast_guard.h"

namespace ragmig::model {
namespace {

BertConfig tiny_config() { return testing::tiny_bert_config(50, 32, 4, 16); }

TEST(Bert, ParameterNamesAreExactlyHuggingFaces) {
  std::vector<std::string> expected = {
      "embeddings.word_embeddings.weight",
      "embeddings.position_embeddings.weight",
      "embeddings.token_type_embeddings.weight",
      "embeddings.LayerNorm.weight",
      "embeddings.LayerNorm.bias",
  };
  for (int i = 0; i < 2; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    for (const char* s : {"attention.self.query.weight", "attention.self.query.bias", "attention.self.key.weight",
                          "attention.self.key.bias", "attention.self.value.weight", "attention.self.value.bias",
                          "attention.output.dense.weight", "attention.output.dense.bias",
                          "attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
                          "intermediate.dense.weight", "intermediate.dense.bias", "output.dense.weight",
                          "output.dense.bias", "output.LayerNorm.weight", "output.LayerNorm.bias"})
      expected.push_back(p + s);
  }
  BertModel model(tiny_config());
  std::vector<std::string> names;
  for (const auto& p : model->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, expected);
  EXPECT_TRUE(model->named_buffers().is_empty());  // nothing but parameters goes into model.safetensors

  auto params = model->named_parameters();
  EXPECT_EQ(params["embeddings.word_embeddings.weight"].sizes(), (std::vector<int64_t>{50, 32}));
  EXPECT_EQ(params["embeddings.position_embeddings.weight"].sizes(), (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(params["encoder.layer.1.intermediate.dense.weight"].sizes(), (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(params["encoder.layer.1.output.dense.weight"].sizes(), (std::vector<int64_t>{32, 64}));
}

TEST(Bert, InitialisationIsHfsAndSeeded) {
  BertConfig c = tiny_config();
  c.vocab_size = 2000;  // enough samples for the std check
  c.pad_token_id = 5;
  torch::manual_seed(123);
  BertModel a(c);
  torch::manual_seed(123);
  BertModel b(c);
  auto pa = a->named_parameters(), pb = b->named_parameters();
  for (const auto& p : pa) {
    EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
    const auto& name = p.key();
    if (name.ends_with("bias")) {
      EXPECT_EQ(p.value().abs().max().item<float>(), 0.0f) << name;
    }
    if (name.ends_with("LayerNorm.weight")) {
      EXPECT_TRUE(torch::all(p.value() == 1).item<bool>()) << name;
    }
  }
  auto words = pa["embeddings.word_embeddings.weight"];
  EXPECT_EQ(words[5].abs().max().item<float>(), 0.0f);
  EXPECT_GT(words[4].abs().max().item<float>(), 0.0f);
  EXPECT_NEAR(words.std().item<double>(), 0.02, 0.001);
  EXPECT_NEAR(pa["encoder.layer.0.attention.self.query.weight"].std().item<double>(), 0.02, 0.004);
}

TEST(Bert, AdditiveMaskUsesTheDtypesLowestValue) {
  auto mask = torch::tensor({{1, 1, 0}}, torch::kLong);
  auto f = additive_attention_mask(mask, torch::kFloat);
  EXPECT_EQ(f.sizes(), (std::vector<int64_t>{1, 1, 1, 3}));
  EXPECT_EQ(f[0][0][0][0].item<float>(), 0.0f);
  EXPECT_EQ(f[0][0][0][2].item<float>(), std::numeric_limits<float>::lowest());
  auto bf = additive_attention_mask(mask, torch::kBFloat16);
  EXPECT_EQ(bf.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(std::isfinite(bf[0][0][0][2].item<float>()));
  EXPECT_LT(bf[0][0][0][2].item<float>(), -1e38f);
}

TEST(Bert, ForwardShapeMaskAndErrors) {
  torch::manual_seed(1);
  BertModel model(tiny_config());
  model->eval();
  auto ids = torch::randint(1, 50, {3, 7}, torch::kLong);
  auto mask = torch::ones({3, 7}, torch::kLong);
  auto out = model->forward(ids, mask);
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{3, 7, 32}));
  EXPECT_EQ(out.scalar_type(), torch::kFloat);
  // A fully masked sequence stays finite (the lowest finite value, not -inf, keeps softmax defined).
  auto out0 = model->forward(ids, torch::zeros({3, 7}, torch::kLong));
  EXPECT_TRUE(torch::isfinite(out0).all().item<bool>());
  // Masked keys do not influence the others: change a masked token, unmasked outputs stay put.
  mask[0][6] = 0;
  auto before = model->forward(ids, mask);
  auto ids2 = ids.clone();
  ids2[0][6] = (ids[0][6].item<int64_t>() % 49) + 1;
  auto after = model->forward(ids2, mask);
  EXPECT_TRUE(torch::allclose(before.slice(1, 0, 6), after.slice(1, 0, 6), 1e-6, 1e-6));
  // Token type 0 by default.
  EXPECT_TRUE(torch::equal(model->forward(ids, mask, torch::zeros_like(ids)), before));

  EXPECT_THROW(model->forward(torch::randint(1, 50, {2, 17}, torch::kLong), torch::ones({2, 17}, torch::kLong)), DataError);
  EXPECT_THROW(model->forward(ids, torch::ones({3, 6}, torch::kLong)), DataError);
  EXPECT_THROW(model->forward(ids.flatten(), mask.flatten()), DataError);
}

TEST(Bert, DropoutOnlyInTraining) {
  BertConfig c = tiny_config();
  c.hidden_dropout_prob = 0.3;
  c.attention_probs_dropout_prob = 0.3;
  torch::manual_seed(2);
  BertModel model(c);
  auto ids = torch::randint(1, 50, {2, 5}, torch::kLong);
  auto mask = torch::ones({2, 5}, torch::kLong);
  model->train();
  EXPECT_FALSE(torch::equal(model->forward(ids, mask), model->forward(ids, mask)));
  model->eval();
  EXPECT_TRUE(torch::equal(model->forward(ids, mask), model->forward(ids, mask)));
}

TEST(Bert, GradientsReachEveryParameterButThePaddingRow) {
  torch::manual_seed(3);
  BertModel model(tiny_config());
  auto ids = torch::tensor({{1, 2, 3, 0}}, torch::kLong);  // 0 = pad
  auto mask = torch::tensor({{1, 1, 1, 0}}, torch::kLong);
  model->forward(ids, mask).pow(2).sum().backward();
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
  }
  auto g = model->embeddings->word_embeddings->weight.grad();
  EXPECT_EQ(g[0].abs().max().item<float>(), 0.0f);  // padding_idx, as HF
  EXPECT_GT(g[1].abs().max().item<float>(), 0.0f);
}

TEST(Bert, Bf16AutocastRunsAndStaysClose) {
  torch::manual_seed(4);
  BertModel model(tiny_config());
  model->eval();
  auto ids = torch::randint(1, 50, {2, 9}, torch::kLong);
  auto mask = torch::ones({2, 9}, torch::kLong);
  mask[1].slice(0, 5).fill_(0);
  torch::NoGradGuard no_grad;
  auto ref = model->forward(ids, mask);
  torch::Tensor low;
  {
    train::AutocastGuard autocast(torch::kCPU, true);
    low = model->forward(ids, mask);
  }
  EXPECT_TRUE(torch::isfinite(low).all().item<bool>());
  const float diff = (low.to(torch::kFloat) - ref).abs().max().item<float>();
  EXPECT_GT(diff, 0.0f);  // autocast really ran the matmuls in bf16
  EXPECT_LT(diff, 0.15f);
}

// set_bf16_residual: under autocast the residual stream stays bf16 from the embeddings to the last LayerNorm
// (padded, unpadded and through one pass over two batches), close to autocast's fp32 stream in states and in every
// parameter's gradient; without autocast, or without the flag, nothing changes.
TEST(Bert, Bf16ResidualStreamStaysBf16AndCloseToTheFp32Stream) {
  auto ids = torch::randint(1, 50, {3, 9}, torch::kLong);
  auto mask = torch::ones({3, 9}, torch::kLong);
  mask[1].slice(0, 5).fill_(0);
  mask[2].slice(0, 2).fill_(0);
  for (const bool unpad : {false, true}) {
    SCOPED_TRACE(unpad ? "unpadded" : "padded");
    BertConfig c = tiny_config();
    c.hidden_dropout_prob = c.attention_probs_dropout_prob = 0.0;
    torch::manual_seed(6);
    BertModel fp32_stream(c);
    torch::manual_seed(6);
    BertModel bf16_stream(c);
    for (auto* m : {&fp32_stream, &bf16_stream}) (*m)->set_unpad(unpad);
    bf16_stream->set_bf16_residual(true);
    ASSERT_TRUE(bf16_stream->bf16_residual());
    EXPECT_TRUE(torch::equal(bf16_stream->forward(ids, mask), fp32_stream->forward(ids, mask))) << "no autocast";
    torch::Tensor a, b;
    {
      train::AutocastGuard autocast(torch::kCPU, true);
      a = fp32_stream->forward(ids, mask);
      b = bf16_stream->forward(ids, mask);
      if (unpad) {  // one pass over two batches (a dual encoder's queries and passages)
        const auto [x, y] = bf16_stream->forward_pair(ids, mask, ids.slice(0, 0, 2), mask.slice(0, 0, 2));
        EXPECT_EQ(x.scalar_type(), torch::kBFloat16);
        EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
      }
    }
    EXPECT_EQ(a.scalar_type(), torch::kFloat) << "autocast's stream: fp32 out of every LayerNorm";
    EXPECT_EQ(b.scalar_type(), torch::kBFloat16);
    const auto keep = mask.unsqueeze(-1).to(torch::kFloat);
    const float diff = ((b.to(torch::kFloat) - a) * keep).abs().max().item<float>();
    EXPECT_GT(diff, 0.0f);
    EXPECT_LT(diff, 0.15f);
    // Gradients through mean pooling, compared weight by weight: fp32 (the weights' own), and near.
    pool(a, mask, Pooling::Mean).pow(2).sum().backward();
    pool(b.to(torch::kFloat), mask, Pooling::Mean).pow(2).sum().backward();
    auto pb = bf16_stream->named_parameters();
    for (const auto& p : fp32_stream->named_parameters()) {
      const auto& ga = p.value().grad();
      const auto& gb = pb[p.key()].grad();
      ASSERT_TRUE(gb.defined()) << p.key();
      EXPECT_EQ(gb.scalar_type(), torch::kFloat) << p.key();
      // Zero but for rounding: the key bias (softmax ignores what it adds to every score of a query's row).
      if (p.key().find("key.bias") != std::string::npos) continue;
      EXPECT_LT((ga - gb).norm().item<double>(), 0.05 * ga.norm().item<double>() + 1e-6) << p.key();
    }
  }
}

// Without autograd (evaluation, GradCache's first pass) the intermediate activation runs in place on the dense
// layer's output: the numbers must be the ones the out-of-place op gives with autograd on, bit for bit.
TEST(Bert, WithoutAutogradTheSameNumbersAsWithIt) {
  for (const std::string act : {"gelu", "relu"}) {
    for (const bool bf16 : {false, true}) {
      SCOPED_TRACE(act + (bf16 ? " bf16" : " fp32"));
      BertConfig c = tiny_config();
      c.hidden_act = act;
      torch::manual_seed(5);
      BertModel model(c);
      model->eval();
      auto ids = torch::randint(1, 50, {3, 11}, torch::kLong);
      auto mask = torch::ones({3, 11}, torch::kLong);
      mask[2].slice(0, 4).fill_(0);
      torch::Tensor with_grad, no_grad, inference;
      {
        train::AutocastGuard autocast(torch::kCPU, bf16);
        with_grad = model->forward(ids, mask);
        {
          torch::NoGradGuard guard;
          no_grad = model->forward(ids, mask);
        }
        {
          c10::InferenceMode guard;
          inference = model->forward(ids, mask);
        }
      }
      ASSERT_TRUE(with_grad.requires_grad());
      EXPECT_TRUE(torch::equal(with_grad.detach(), no_grad));
      EXPECT_TRUE(torch::equal(with_grad.detach(), inference));
    }
  }
}

// --- MPNet: BERT plus a relative position bias (its parity with transformers: tests/hf) ------------------------

BertConfig tiny_mpnet_config() {
  BertConfig c = testing::as_mpnet(tiny_config());
  c.max_position_embeddings = 42;
  return c;
}

TEST(MPNet, BucketsAreExactNearAndLogarithmicFar) {
  const auto b = relative_position_buckets(600, 32);
  EXPECT_EQ(b.sizes(), (std::vector<int64_t>{600, 600}));
  for (int64_t d = 0; d < 8; ++d) {
    EXPECT_EQ(b[0][d].item<int64_t>(), d == 0 ? 0 : 16 + d) << "a key " << d << " after the query";
    EXPECT_EQ(b[d][0].item<int64_t>(), d) << "a key " << d << " before the query";
  }
  EXPECT_EQ(b[0][8].item<int64_t>(), 24);   // 8 + floor(log(8/8) / log(16) * 8)
  EXPECT_EQ(b[19][0].item<int64_t>(), 10);  // 8 + floor(log(19/8) / log(16) * 8) = 8 + floor(2.50)
  EXPECT_EQ(b[599][0].item<int64_t>(), 15) << "far distances share the last bucket";
  EXPECT_EQ(b[0][599].item<int64_t>(), 31);
  EXPECT_TRUE(torch::equal(b[5].slice(0, 0, 20), b[6].slice(0, 1, 21))) << "only the distance counts";
}

TEST(MPNet, ParametersAreBertsLessTokenTypesPlusTheRelativeBias) {
  BertModel model(tiny_mpnet_config());
  auto params = model->named_parameters();
  EXPECT_EQ(params.find("embeddings.token_type_embeddings.weight"), nullptr);
  ASSERT_NE(params.find("encoder.relative_attention_bias.weight"), nullptr);
  EXPECT_EQ(params["encoder.relative_attention_bias.weight"].sizes(), (std::vector<int64_t>{32, 4}));
  EXPECT_NE(params.find("encoder.layer.1.attention.self.query.weight"), nullptr);
}

// The bias moves the attention (so a wrong bias cannot pass the parity tests by being too small), positions
// start at 2 and the longest input is max_position_embeddings - 2.
TEST(MPNet, PositionsStartAtTwoAndTheBiasCounts) {
  torch::manual_seed(6);
  BertModel model(tiny_mpnet_config());
  model->eval();
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(3, 50, {2, 40}, torch::kLong);
  auto mask = torch::ones({2, 40}, torch::kLong);
  const auto out = model->forward(ids, mask);
  EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
  EXPECT_THROW(model->forward(torch::randint(3, 50, {1, 41}, torch::kLong), torch::ones({1, 41}, torch::kLong)),
               DataError);
  // Rows 0 and 1 of the position embeddings are never read.
  model->embeddings->position_embeddings->weight.slice(0, 0, 2).fill_(100);
  EXPECT_TRUE(torch::equal(model->forward(ids, mask), out));
  model->encoder->relative_attention_bias->weight.normal_(0.0, 2.0);
  EXPECT_GT((model->forward(ids, mask) - out).abs().max().item<float>(), 1e-3f);
}

// Fused (SDPA with the bias as its mask) and manual attention, padded and unpadded: the same outputs and the
// same gradients, the relative bias's included; padding changes nothing on the real tokens.
TEST(MPNet, EveryAttentionPathAgreesInValueAndGradient) {
  torch::manual_seed(7);
  BertModel model(tiny_mpnet_config());
  auto ids = torch::randint(3, 50, {3, 12}, torch::kLong);
  auto mask = torch::ones({3, 12}, torch::kLong);
  mask[1].slice(0, 7).fill_(0);
  mask[2].slice(0, 3).fill_(0);
  ids.masked_fill_(mask == 0, 1);
  model->eval();  // no dropout: the paths must agree exactly up to rounding
  struct Run {
    torch::Tensor out, bias_grad, query_grad;
  };
  auto run = [&](AttentionImpl impl, bool unpad) {
    model->set_attention_impl(impl);
    model->set_unpad(unpad);
    model->zero_grad();
    const auto out = model->forward(ids, mask) * mask.unsqueeze(-1);
    out.pow(2).sum().backward();
    return Run{out.detach(), model->encoder->relative_attention_bias->weight.grad().clone(),
               model->named_parameters()["encoder.layer.0.attention.self.query.weight"].grad().clone()};
  };
  const Run manual = run(AttentionImpl::Manual, false);
  EXPECT_GT(manual.bias_grad.abs().max().item<float>(), 0.0f);
  for (const auto& [impl, unpad] : {std::pair{AttentionImpl::Fused, false}, {AttentionImpl::Fused, true},
                                    {AttentionImpl::Manual, true}}) {
    SCOPED_TRACE(std::string(impl == AttentionImpl::Fused ? "fused" : "manual") + (unpad ? ", unpadded" : ""));
    const Run r = run(impl, unpad);
    EXPECT_TRUE(torch::allclose(r.out, manual.out, 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(r.bias_grad, manual.bias_grad, 1e-4, 1e-4));
    EXPECT_TRUE(torch::allclose(r.query_grad, manual.query_grad, 1e-4, 1e-4));
  }
  // Row 1 alone, unpadded: the same as within the padded batch.
  model->set_unpad(false);
  torch::NoGradGuard no_grad;
  const auto alone = model->forward(ids[1].slice(0, 0, 7).unsqueeze(0), torch::ones({1, 7}, torch::kLong));
  EXPECT_TRUE(torch::allclose(alone[0], manual.out[1].slice(0, 0, 7), 1e-5, 1e-5));
}

TEST(MPNet, Bf16AutocastRunsAndStaysClose) {
  torch::manual_seed(8);
  BertModel model(tiny_mpnet_config());
  model->eval();
  auto ids = torch::randint(3, 50, {2, 9}, torch::kLong);
  auto mask = torch::ones({2, 9}, torch::kLong);
  mask[1].slice(0, 5).fill_(0);
  torch::NoGradGuard no_grad;
  const auto ref = model->forward(ids, mask);
  torch::Tensor low;
  {
    train::AutocastGuard autocast(torch::kCPU, true);
    low = model->forward(ids, mask);
  }
  EXPECT_TRUE(torch::isfinite(low).all().item<bool>());
  EXPECT_LT((low.to(torch::kFloat) - ref).abs().max().item<float>(), 0.15f);
}

}  // namespace
}  // namespace ragmig::model
