// The encoder on real tokens only (model/unpad.h): packing round trips, and an unpadded BERT gives the padded
// one's states and gradients on every real token (zeros at the padding), with both attention paths.
#include "model/unpad.h"

#include <gtest/gtest.h>

#include "model/bert.h"
#include "model/dual_encoder.h"
#include "support/tiny_bert.h"

namespace ragmig::model {
namespace {

// Rows of 7, 3, 0 and 5 tokens; the last has a hole (a mask need not be a prefix).
torch::Tensor ragged_mask() {
  return torch::tensor({1, 1, 1, 1, 1, 1, 1,  //
                        1, 1, 1, 0, 0, 0, 0,  //
                        0, 0, 0, 0, 0, 0, 0,  //
                        1, 1, 0, 1, 1, 1, 0},
                       torch::kLong)
      .view({4, 7});
}

TEST(Unpad, PackingRoundTripsAndCountsRows) {
  const auto mask = ragged_mask();
  const Packing p = make_packing(mask);
  EXPECT_EQ(p.rows, 4);
  EXPECT_EQ(p.length, 7);
  EXPECT_TRUE(torch::equal(p.cu_seqlens, torch::tensor({0, 7, 10, 10, 15}, torch::kInt)));
  EXPECT_TRUE(torch::equal(p.index.slice(0, 10), torch::tensor({21, 22, 24, 25, 26}, torch::kLong)));
  const auto x = torch::randn({4, 7, 3});
  const auto packed = pack(x, p);
  ASSERT_EQ(packed.sizes(), (std::vector<int64_t>{15, 3}));
  const auto back = unpack(packed, p);
  const auto keep = mask.unsqueeze(-1).to(torch::kFloat);
  EXPECT_TRUE(torch::equal(back, x * keep)) << "tokens in place, zeros at the padding";
  EXPECT_TRUE(torch::equal(pack(mask, p), torch::ones({15}, torch::kLong)));
  EXPECT_THROW(make_packing(mask.flatten()), std::exception);
}

TEST(Unpad, PackingForADeviceIsTheMasksPacking) {
  const Packing a = make_packing(ragged_mask()), b = make_packing(ragged_mask(), torch::kCPU);
  EXPECT_TRUE(torch::equal(a.index, b.index));
  EXPECT_TRUE(torch::equal(a.cu_seqlens, b.cu_seqlens));
  EXPECT_EQ(b.index.device(), torch::Device(torch::kCPU));
  EXPECT_EQ(std::make_pair(a.rows, a.length), std::make_pair(b.rows, b.length));
}

TEST(Unpad, UnpaddedBertMatchesThePaddedOneOnRealTokens) {
  auto config = testing::tiny_bert_config(60, 32, 4, 16);
  config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.0;
  const auto mask = ragged_mask();
  const auto ids = torch::randint(3, 60, {4, 7}, torch::kLong) * mask;  // pad id 0 at the padding
  for (const auto impl : {AttentionImpl::Manual, AttentionImpl::Fused}) {
    torch::manual_seed(11);
    BertModel padded(config);
    torch::manual_seed(11);
    BertModel unpadded(config);
    padded->set_attention_impl(impl);
    unpadded->set_attention_impl(impl);
    unpadded->set_unpad(true);
    ASSERT_TRUE(unpadded->unpad());
    const auto a = padded->forward(ids, mask), b = unpadded->forward(ids, mask);
    const auto keep = mask.unsqueeze(-1).to(torch::kFloat);
    EXPECT_LT((a * keep - b).abs().max().item<double>(), 1e-5) << "real tokens, impl " << static_cast<int>(impl);
    EXPECT_EQ((b * (1 - keep)).abs().max().item<double>(), 0.0) << "zeros at the padding";
    // Gradients through mean pooling (training mode, no dropout): the same for every parameter.
    pool(a, mask, Pooling::Mean).pow(2).sum().backward();
    pool(b, mask, Pooling::Mean).pow(2).sum().backward();
    auto pb = unpadded->named_parameters();
    for (const auto& p : padded->named_parameters()) {
      ASSERT_TRUE(p.value().grad().defined()) << p.key();
      EXPECT_LT((p.value().grad() - pb[p.key()].grad()).abs().max().item<double>(), 1e-5) << p.key();
    }
  }
}

TEST(Unpad, DropoutStaysSeededAndEvalIsDeterministic) {
  auto config = testing::tiny_bert_config(60, 32, 4, 16);  // BERT's dropout 0.1 on
  const auto mask = ragged_mask();
  const auto ids = torch::randint(3, 60, {4, 7}, torch::kLong) * mask;
  BertModel m(config);
  m->set_unpad(true);
  torch::manual_seed(5);
  const auto first = m->forward(ids, mask);
  torch::manual_seed(5);
  EXPECT_TRUE(torch::equal(m->forward(ids, mask), first)) << "the same seed, the same masks";
  EXPECT_FALSE(torch::equal(m->forward(ids, mask), first)) << "dropout is on in training";
  m->eval();
  EXPECT_TRUE(torch::equal(m->forward(ids, mask), m->forward(ids, mask)));
}

}  // namespace
}  // namespace ragmig::model
