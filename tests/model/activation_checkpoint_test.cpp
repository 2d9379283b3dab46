// Activation checkpointing (model/activation_checkpoint.h) in every tower: the same loss and gradients as without,
// bit for bit, with dropout drawing its masks again in backward, padded and unpadded, one batch or a joined pair;
// MPNet's position bias (a parameter's product, built inside each layer) gets its gradient; layers still train when
// their input needs no gradient (LoRA over frozen embeddings).
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "model/activation_checkpoint.h"
#include "model/bert.h"
#include "model/bert_config.h"

namespace ragmig::model {
namespace {

BertConfig decoder_config() {
  return bert_config_from_json({{"model_type", "llama"},
                                {"vocab_size", 40},
                                {"hidden_size", 16},
                                {"num_hidden_layers", 3},
                                {"num_attention_heads", 4},
                                {"num_key_value_heads", 2},
                                {"intermediate_size", 24},
                                {"attention_dropout", 0.2},
                                {"max_position_embeddings", 32}},
                               "config.json");
}

BertConfig gemma_config() {
  return bert_config_from_json({{"model_type", "gemma3_text"},
                                {"vocab_size", 40},
                                {"hidden_size", 16},
                                {"num_hidden_layers", 2},
                                {"num_attention_heads", 2},
                                {"num_key_value_heads", 1},
                                {"head_dim", 8},
                                {"intermediate_size", 24},
                                {"max_position_embeddings", 32},
                                {"attention_dropout", 0.2},
                                {"sliding_window", 4},
                                {"layer_types", {"sliding_attention", "full_attention"}},
                                {"use_bidirectional_attention", true}},
                               "config.json");
}

// BERT with both dropouts (hidden and attention), or MPNet (its relative_attention_bias feeds every layer).
BertConfig bert_config(const std::string& model_type) {
  BertConfig c;
  c.model_type = model_type;
  c.vocab_size = 40;
  c.hidden_size = 16;
  c.num_hidden_layers = 3;
  c.num_attention_heads = 2;
  c.intermediate_size = 24;
  c.max_position_embeddings = 40;
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.2;
  if (model_type == "mpnet") {
    c.pad_token_id = 1;
    c.type_vocab_size = 0;
    c.relative_attention_num_buckets = 32;
  }
  return c;
}

// ModernBERT with a global and a sliding layer and all three dropouts.
BertConfig modernbert_config() {
  BertConfig c;
  c.model_type = "modernbert";
  c.vocab_size = 40;
  c.hidden_size = 16;
  c.num_attention_heads = 2;
  c.intermediate_size = 24;
  c.num_hidden_layers = 2;
  c.max_position_embeddings = 32;
  c.type_vocab_size = 0;
  c.pad_token_id = 0;
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.2;
  c.modernbert.embedding_dropout = 0.1;
  c.modernbert.sliding_layers = {false, true};
  c.modernbert.local_attention = 4;
  return c;
}

struct Step {
  torch::Tensor loss;
  std::map<std::string, torch::Tensor> grads;
};

enum class Pass { Padded, Unpadded, Pair };

// One training step's loss and gradients from the same weights, input and generator state; under CPU bf16 autocast
// with `bf16`. `pass`: forward padded, unpadded (set_unpad), or forward_pair over two batches.
Step step(const BertConfig& config, bool checkpoint, bool frozen_embeddings, bool bf16 = false,
          Pass pass = Pass::Padded) {
  torch::manual_seed(5);
  BertModel tower(config);
  for (auto& p : tower->named_parameters())
    if (frozen_embeddings && p.key().rfind("embed_tokens", 0) == 0) p.value().requires_grad_(false);
  tower->train();
  tower->set_activation_checkpointing(checkpoint);
  tower->set_unpad(pass != Pass::Padded);
  const auto ids = torch::tensor({{3, 9, 14, 7, 22, 5}, {8, 2, 30, 0, 0, 0}}, torch::kLong);
  const auto mask = torch::tensor({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 0, 0, 0}}, torch::kLong);
  const auto ids_b = torch::tensor({{4, 6, 0, 0}, {11, 12, 13, 15}, {19, 0, 0, 0}}, torch::kLong);
  const auto mask_b = torch::tensor({{1, 1, 0, 0}, {1, 1, 1, 1}, {1, 0, 0, 0}}, torch::kLong);
  const auto weights = torch::randn({2, 6, 16}), weights_b = torch::randn({3, 4, 16});
  torch::manual_seed(11);  // dropout's masks
  Step out;
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCPU, bf16);
  if (pass == Pass::Pair) {
    EXPECT_TRUE(tower->joins_batches());
    const auto [a, b] = tower->forward_pair(ids, mask, ids_b, mask_b);
    out.loss = (a.to(torch::kFloat) * weights).sum() + (b.to(torch::kFloat) * weights_b).sum();
  } else {
    out.loss = (tower->forward(ids, mask).to(torch::kFloat) * weights).sum();
  }
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  out.loss.backward();
  for (const auto& p : tower->named_parameters())
    if (p.value().grad().defined()) out.grads[p.key()] = p.value().grad().clone();
  return out;
}

void expect_same_step(const BertConfig& config, bool frozen_embeddings, bool bf16 = false, Pass pass = Pass::Padded) {
  const Step plain = step(config, false, frozen_embeddings, bf16, pass);
  const Step checkpointed = step(config, true, frozen_embeddings, bf16, pass);
  const std::string what = config.model_type + " pass " + std::to_string(static_cast<int>(pass));
  EXPECT_TRUE(torch::equal(plain.loss, checkpointed.loss)) << what;
  ASSERT_EQ(plain.grads.size(), checkpointed.grads.size()) << what;
  EXPECT_GT(plain.grads.size(), 10u);
  for (const auto& [name, grad] : plain.grads) {
    ASSERT_TRUE(checkpointed.grads.count(name)) << what << " " << name;
    // MPNet's one position-bias table gets a gradient from every layer: summed in the bias's backward without
    // checkpointing, in the table's gradient layer by layer with it, so equal up to the order of float additions.
    if (name == "encoder.relative_attention_bias.weight")
      EXPECT_TRUE(torch::allclose(grad, checkpointed.grads.at(name), 1e-5, 1e-7))
          << what << " " << (grad - checkpointed.grads.at(name)).abs().max().item<double>();
    else
      EXPECT_TRUE(torch::equal(grad, checkpointed.grads.at(name))) << what << " " << name;
  }
}

TEST(ActivationCheckpoint, DecodersAndGemma3GiveTheSameGradientsWithDropoutDrawnAgain) {
  expect_same_step(decoder_config(), false);
  expect_same_step(gemma_config(), false);
}

// Backward runs on autograd's threads, where the forward's autocast is off: the recompute sets it again, so the
// layer computes in bf16 as its forward did.
TEST(ActivationCheckpoint, TheRecomputeRunsUnderTheForwardsAutocast) {
  expect_same_step(decoder_config(), false, /*bf16=*/true);
  expect_same_step(gemma_config(), false, /*bf16=*/true);
  EXPECT_FALSE(torch::equal(step(decoder_config(), false, false, true).loss, step(decoder_config(), false, false).loss))
      << "bf16 computes otherwise";
}

TEST(ActivationCheckpoint, LayersTrainWhenTheirInputNeedsNoGradient) {
  expect_same_step(decoder_config(), true);
  const Step frozen = step(decoder_config(), true, true);
  EXPECT_TRUE(frozen.grads.count("layers.0.self_attn.q_proj.weight")) << "the first layer's input needs no gradient";
  EXPECT_FALSE(frozen.grads.count("embed_tokens.weight"));
}

TEST(ActivationCheckpoint, WithoutGradientsTheLayerRunsOnce) {
  int runs = 0;
  const auto fn = [&](const torch::Tensor& x) {
    ++runs;
    return x * 2;
  };
  const auto w = torch::ones({3}, torch::requires_grad());
  {
    torch::NoGradGuard no_grad;
    checkpointed(fn, torch::ones({3}), {w});
  }
  EXPECT_EQ(runs, 1);
  const auto y = checkpointed([&](const torch::Tensor& x) { return fn(x) * w; }, torch::ones({3}), {w});
  EXPECT_EQ(runs, 2);
  y.sum().backward();
  EXPECT_EQ(runs, 3) << "once more in backward";
  EXPECT_TRUE(torch::equal(w.grad(), torch::full({3}, 2.0)));
}

// BERT's and ModernBERT's packed passes keep their packing (shared) for the replay: padded, unpadded and a joined
// pair of batches give the same gradients; so does MPNet, whose position bias each layer's replay builds again from
// relative_attention_bias (a gradient a replay on a bias built outside the layer would lose).
TEST(ActivationCheckpoint, BertMpnetAndModernBertGiveTheSameGradientsPaddedUnpaddedAndJoined) {
  for (const Pass pass : {Pass::Padded, Pass::Unpadded, Pass::Pair}) {
    expect_same_step(bert_config("bert"), false, false, pass);
    expect_same_step(modernbert_config(), false, false, pass);
  }
  for (const Pass pass : {Pass::Padded, Pass::Unpadded}) expect_same_step(bert_config("mpnet"), false, false, pass);
  const Step mpnet = step(bert_config("mpnet"), true, false);
  ASSERT_TRUE(mpnet.grads.count("encoder.relative_attention_bias.weight"));
  EXPECT_GT(mpnet.grads.at("encoder.relative_attention_bias.weight").abs().sum().item<double>(), 0.0);
  expect_same_step(bert_config("bert"), false, /*bf16=*/true, Pass::Unpadded);
  expect_same_step(modernbert_config(), false, /*bf16=*/true, Pass::Pair);
}

}  // namespace
}  // namespace ragmig::model
