// Tests of the dual encoder: tower naming, padding invariance of mean pooling, [CLS] pooling, L2
// normalisation, and shared versus separate towers.
#include "model/dual_encoder.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/tiny_bert.h"

namespace ragmig::model {
namespace {

EncoderSpec tiny_spec() {
  EncoderSpec s;
  s.bert = testing::tiny_bert_config(60, 32, 4, 32);
  return s;
}

TEST(Pooling, NamesRoundTrip) {
  for (const char* s : {"mean", "cls", "max", "mean_sqrt_len_tokens"}) EXPECT_EQ(to_string(parse_pooling(s)), s);
  EXPECT_THROW(parse_pooling("weightedmean"), DataError);
  EXPECT_THROW(parse_pooling("Mean"), DataError);
}

// Max and mean_sqrt_len_tokens over the real tokens only, by hand on a small hidden state.
TEST(Pooling, MaxAndMeanSqrtLenReadOnlyTheRealTokens) {
  const auto hidden = torch::tensor({{{1.0f, -2.0f}, {3.0f, -5.0f}, {100.0f, 100.0f}},
                                     {{-1.0f, 4.0f}, {-3.0f, 0.0f}, {-2.0f, 2.0f}}});
  const auto mask = torch::tensor({{1, 1, 0}, {1, 1, 1}}, torch::kLong);
  EXPECT_TRUE(torch::equal(pool(hidden, mask, Pooling::Max), torch::tensor({{3.0f, -2.0f}, {-1.0f, 4.0f}})));
  const auto sqrt_len = pool(hidden, mask, Pooling::MeanSqrtLen);
  EXPECT_TRUE(torch::allclose(sqrt_len, torch::tensor({{4.0f / std::sqrt(2.0f), -7.0f / std::sqrt(2.0f)},
                                                       {-6.0f / std::sqrt(3.0f), 6.0f / std::sqrt(3.0f)}})));
  EXPECT_TRUE(torch::allclose(sqrt_len, pool(hidden, mask, Pooling::Mean) * mask.sum(1, true).to(torch::kFloat).sqrt()));
  EXPECT_TRUE(torch::isinf(pool(hidden, torch::zeros_like(mask), Pooling::Max)).all().item<bool>())
      << "no real token: -inf, as sentence-transformers";
}

TEST(DualEncoder, TowerNames) {
  EncoderSpec s = tiny_spec();
  DualEncoder shared(s);
  for (const auto& p : shared->named_parameters()) EXPECT_TRUE(p.key().starts_with("query.")) << p.key();
  EXPECT_EQ(shared->named_parameters().size(), 37u);  // 5 embedding + 2 x 16 layer tensors
  EXPECT_NE(shared->named_parameters().find("query.embeddings.word_embeddings.weight"), nullptr);
  EXPECT_EQ(shared->passage_tower().ptr(), shared->query_tower().ptr());

  s.shared_towers = false;
  DualEncoder separate(s);
  EXPECT_EQ(separate->named_parameters().size(), 74u);
  EXPECT_NE(separate->named_parameters().find("passage.encoder.layer.1.output.LayerNorm.bias"), nullptr);
  EXPECT_NE(separate->passage_tower().ptr(), separate->query_tower().ptr());
}

TEST(DualEncoder, MeanPoolingIgnoresPadding) {
  EncoderSpec s = tiny_spec();
  s.normalize = false;
  torch::manual_seed(11);
  DualEncoder model(s);
  model->eval();
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(1, 60, {2, 6}, torch::kLong);
  auto mask = torch::ones({2, 6}, torch::kLong);
  mask[1].slice(0, 4).fill_(0);  // the second sequence has 4 real tokens
  auto base = model->encode_queries(ids, mask);
  EXPECT_EQ(base.sizes(), (std::vector<int64_t>{2, 32}));
  EXPECT_EQ(base.scalar_type(), torch::kFloat);

  // Padding with more positions, with junk ids under mask 0, leaves every embedding unchanged.
  auto ids_long = torch::cat({ids, torch::randint(1, 60, {2, 9}, torch::kLong)}, 1);
  auto mask_long = torch::cat({mask, torch::zeros({2, 9}, torch::kLong)}, 1);
  ids_long[1].slice(0, 4, 6).fill_(17);
  auto padded = model->encode_queries(ids_long, mask_long);
  EXPECT_TRUE(torch::allclose(base, padded, 1e-5, 1e-6)) << (base - padded).abs().max();

  // The second sequence alone, unpadded, gives the same vector too.
  auto alone = model->encode_queries(ids[1].slice(0, 0, 4).unsqueeze(0), torch::ones({1, 4}, torch::kLong));
  EXPECT_TRUE(torch::allclose(base[1], alone[0], 1e-5, 1e-6)) << (base[1] - alone[0]).abs().max();

  // Mean over the real tokens of the last hidden state, nothing else.
  auto hidden = model->query_tower()->forward(ids, mask);
  auto expect = hidden[1].slice(0, 0, 4).mean(0);
  EXPECT_TRUE(torch::allclose(base[1], expect, 1e-6, 1e-6));
}

TEST(DualEncoder, PoolOfAllPaddingIsZeroNotNan) {
  auto hidden = torch::randn({1, 3, 4});
  auto out = pool(hidden, torch::zeros({1, 3}, torch::kLong), Pooling::Mean);
  EXPECT_EQ(out.abs().max().item<float>(), 0.0f);
  auto bf = pool(hidden.to(torch::kBFloat16), torch::ones({1, 3}, torch::kLong), Pooling::Mean);
  EXPECT_EQ(bf.scalar_type(), torch::kFloat);
}

TEST(DualEncoder, ClsPoolingPicksPositionZero) {
  EncoderSpec s = tiny_spec();
  s.pooling = Pooling::Cls;
  s.normalize = false;
  torch::manual_seed(12);
  DualEncoder model(s);
  model->eval();
  torch::NoGradGuard no_grad;
  auto ids = torch::randint(1, 60, {3, 5}, torch::kLong);
  auto mask = torch::ones({3, 5}, torch::kLong);
  mask[2].slice(0, 2).fill_(0);
  auto hidden = model->query_tower()->forward(ids, mask);
  EXPECT_TRUE(torch::equal(model->encode_passages(ids, mask), hidden.select(1, 0)));
}

TEST(DualEncoder, NormalizeGivesUnitNorm) {
  EncoderSpec s = tiny_spec();
  for (Pooling p : {Pooling::Mean, Pooling::Cls, Pooling::Max, Pooling::MeanSqrtLen}) {
    s.pooling = p;
    torch::manual_seed(13);
    DualEncoder model(s);
    auto ids = torch::randint(1, 60, {4, 7}, torch::kLong);
    auto mask = torch::ones({4, 7}, torch::kLong);
    mask[3].slice(0, 3).fill_(0);
    auto q = model->encode_queries(ids, mask);
    auto d = model->encode_passages(ids, mask);
    EXPECT_TRUE(torch::allclose(q.norm(2, 1), torch::ones({4}), 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(d.norm(2, 1), torch::ones({4}), 1e-5, 1e-5));
    EXPECT_TRUE(q.requires_grad());  // training flows through the encoder
  }
}

TEST(DualEncoder, SharedAndSeparateTowers) {
  EncoderSpec s = tiny_spec();
  torch::manual_seed(14);
  DualEncoder shared(s);
  shared->eval();
  auto ids = torch::randint(1, 60, {2, 6}, torch::kLong);
  auto mask = torch::ones({2, 6}, torch::kLong);
  EXPECT_TRUE(torch::equal(shared->encode_queries(ids, mask), shared->encode_passages(ids, mask)));

  s.shared_towers = false;
  torch::manual_seed(14);
  DualEncoder separate(s);
  separate->eval();
  // The query tower is built first, so it matches the shared model built from the same seed.
  EXPECT_TRUE(torch::equal(separate->encode_queries(ids, mask), shared->encode_queries(ids, mask)));
  EXPECT_FALSE(torch::equal(separate->encode_queries(ids, mask), separate->encode_passages(ids, mask)));
}

}  // namespace
}  // namespace ragmig::model
