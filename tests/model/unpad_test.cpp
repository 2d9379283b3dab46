// The encoder on real tokens only (model/unpad.h): packing round trips, and an unpadded BERT gives the padded
// one's states and gradients on every real token (zeros at the padding), with both attention paths.
#include "model/unpad.h"

#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <functional>

#include "model/bert.h"
#include "model/dual_encoder.h"
#include "model/keyed_dropout.h"
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

// Rows of 2, 9 and 0 tokens, `width` (>= 9) wide: wider than ragged_mask's 7.
torch::Tensor other_mask(int64_t width) {
  auto m = torch::zeros({3, width}, torch::kLong);
  m[0].narrow(0, 0, 2).fill_(1);
  m[1].narrow(0, 0, 9).fill_(1);
  return m;
}

// Joined, two packings are the packing of one grid: the first batch's rows then the second's, each padded on the
// right to the wider of the two; the wider batch first or second.
TEST(Unpad, JoinedPackingsAreThePackingOfBothBatchesOnOneGrid) {
  for (const int64_t width : {9, 11})
    for (const bool wider_first : {false, true}) {
      const auto narrow = ragged_mask(), wide = other_mask(width);
      const auto& x = wider_first ? wide : narrow;
      const auto& y = wider_first ? narrow : wide;
      auto grid = torch::zeros({x.size(0) + y.size(0), width}, torch::kLong);
      grid.narrow(0, 0, x.size(0)).narrow(1, 0, x.size(1)).copy_(x);
      grid.narrow(0, x.size(0), y.size(0)).narrow(1, 0, y.size(1)).copy_(y);
      const Packing joint = join_packings(make_packing(x), make_packing(y)), expected = make_packing(grid);
      EXPECT_TRUE(torch::equal(joint.index, expected.index)) << joint.index;
      EXPECT_TRUE(torch::equal(joint.cu_seqlens, expected.cu_seqlens)) << joint.cu_seqlens;
      EXPECT_EQ(std::make_pair(joint.rows, joint.length), std::make_pair(expected.rows, expected.length));
    }
}

// One pass over two batches of different lengths gives each batch's states, and the gradients of two passes: BERT,
// and ModernBERT (its sliding layers' window of 4 narrower than both batches).
TEST(Unpad, OnePassOverTwoBatchesGivesWhatAPassEachGives) {
  auto bert = testing::tiny_bert_config(60, 32, 4, 16);
  bert.hidden_dropout_prob = bert.attention_probs_dropout_prob = 0.0;
  bert.num_hidden_layers = 3;
  const auto mask_a = ragged_mask(), mask_b = other_mask(11);
  const auto ids_a = torch::randint(3, 60, {4, 7}, torch::kLong) * mask_a;
  const auto ids_b = torch::randint(3, 60, {3, 11}, torch::kLong) * mask_b;
  for (const auto& [config, impl] : {std::pair{bert, AttentionImpl::Manual}, std::pair{bert, AttentionImpl::Fused},
                                     std::pair{testing::as_modernbert(bert, 4), AttentionImpl::Manual},
                                     std::pair{testing::as_modernbert(bert, 4), AttentionImpl::Fused}}) {
    SCOPED_TRACE(config.model_type + ", impl " + std::to_string(static_cast<int>(impl)));
    torch::manual_seed(12);
    BertModel apart(config);
    torch::manual_seed(12);
    BertModel joint(config);
    for (auto* m : {&apart, &joint}) {
      (*m)->set_attention_impl(impl);
      (*m)->set_unpad(true);
    }
    ASSERT_TRUE(joint->joins_batches());
    const auto a = apart->forward(ids_a, mask_a), b = apart->forward(ids_b, mask_b);
    const auto [ja, jb] = joint->forward_pair(ids_a, mask_a, ids_b, mask_b);
    ASSERT_EQ(ja.sizes(), a.sizes());
    ASSERT_EQ(jb.sizes(), b.sizes());
    EXPECT_LT((ja - a).abs().max().item<double>(), 1e-5);
    EXPECT_LT((jb - b).abs().max().item<double>(), 1e-5);
    (pool(a, mask_a, Pooling::Mean).pow(2).sum() + pool(b, mask_b, Pooling::Mean).sum()).backward();
    (pool(ja, mask_a, Pooling::Mean).pow(2).sum() + pool(jb, mask_b, Pooling::Mean).sum()).backward();
    auto pj = joint->named_parameters();
    for (const auto& p : apart->named_parameters()) {
      ASSERT_TRUE(p.value().grad().defined()) << p.key();
      EXPECT_LT((p.value().grad() - pj[p.key()].grad()).abs().max().item<double>(), 1e-5) << p.key();
    }
    {  // the wider batch first
      torch::NoGradGuard no_grad;
      const auto [rb, ra] = joint->forward_pair(ids_b, mask_b, ids_a, mask_a);
      EXPECT_LT((ra - a).abs().max().item<double>(), 1e-5);
      EXPECT_LT((rb - b).abs().max().item<double>(), 1e-5);
    }
    // A batch of no rows (a replica's empty share) joins too.
    const auto none = torch::zeros({0, 5}, torch::kLong);
    const auto [ea, empty] = joint->forward_pair(ids_a, mask_a, none, none);
    EXPECT_LT((ea - a).abs().max().item<double>(), 1e-5);
    EXPECT_EQ(empty.sizes(), (std::vector<int64_t>{0, 5, config.hidden_size}));
  }
  // Padded, and MPNet (a position bias per length): a pass each, as forward gives.
  BertModel padded(bert);
  EXPECT_FALSE(padded->joins_batches());
  padded->eval();
  const auto [pa, pb] = padded->forward_pair(ids_a, mask_a, ids_b, mask_b);
  EXPECT_TRUE(torch::equal(pa, padded->forward(ids_a, mask_a)));
  EXPECT_TRUE(torch::equal(pb, padded->forward(ids_b, mask_b)));
  auto mpnet_config = bert;
  mpnet_config.model_type = "mpnet";
  mpnet_config.type_vocab_size = 0;
  mpnet_config.relative_attention_num_buckets = 32;
  BertModel mpnet(mpnet_config);
  mpnet->set_unpad(true);
  EXPECT_FALSE(mpnet->joins_batches());
}

// How many dropout keys (model/keyed_dropout.h: one per dropout a forward pass applies) `fn` draws.
int64_t dropout_keys_drawn(const std::function<void()>& fn) {
  auto gen = at::detail::getDefaultCPUGenerator();
  torch::manual_seed(3);
  const auto start = gen.get_state();
  fn();
  const auto after = gen.get_state();
  gen.set_state(start);
  for (int64_t keys = 0; keys < 1000; ++keys, keyed_dropout_key())
    if (torch::equal(gen.get_state(), after)) return keys;
  return -1;
}

// The pair really goes through one pass: with dropout on, it applies each dropout once for both batches (but
// attention's, which the CPU pads batch by batch), where two passes apply every one twice.
TEST(Unpad, OnePassOverTwoBatchesDropsOutOncePerLayer) {
  const auto config = testing::tiny_bert_config(60, 32, 4, 16);  // dropout 0.1
  const auto mask_a = ragged_mask(), mask_b = other_mask(11);
  const auto ids_a = torch::randint(3, 60, {4, 7}, torch::kLong) * mask_a;
  const auto ids_b = torch::randint(3, 60, {3, 11}, torch::kLong) * mask_b;
  BertModel m(config);
  m->set_unpad(true);
  const int64_t one = dropout_keys_drawn([&] { m->forward(ids_a, mask_a); });
  const int64_t two = dropout_keys_drawn([&] { m->forward(ids_a, mask_a), m->forward(ids_b, mask_b); });
  const int64_t pair = dropout_keys_drawn([&] { m->forward_pair(ids_a, mask_a, ids_b, mask_b); });
  const int64_t layers = config.num_hidden_layers;
  EXPECT_EQ(one, 1 + 3 * layers) << "embeddings, then attention probabilities, attention output, output per layer";
  EXPECT_EQ(two, 2 * one);
  EXPECT_EQ(pair, one + layers) << "one pass, attention probabilities dropped batch by batch";
}

}  // namespace
}  // namespace ragmig::model
