// Activation checkpointing (model/activation_checkpoint.h) in the towers that take it: the same loss and gradients
// as without, bit for bit, with dropout drawing its masks again in backward; layers still train when their input
// needs no gradient (LoRA over frozen embeddings); a family that does not take it says so.
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "core/error.h"
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

struct Step {
  torch::Tensor loss;
  std::map<std::string, torch::Tensor> grads;
};

// One training step's loss and gradients from the same weights, input and generator state; under CPU bf16 autocast
// with `bf16`.
Step step(const BertConfig& config, bool checkpoint, bool frozen_embeddings, bool bf16 = false) {
  torch::manual_seed(5);
  BertModel tower(config);
  for (auto& p : tower->named_parameters())
    if (frozen_embeddings && p.key().rfind("embed_tokens", 0) == 0) p.value().requires_grad_(false);
  tower->train();
  tower->set_activation_checkpointing(checkpoint);
  const auto ids = torch::tensor({{3, 9, 14, 7, 22, 5}, {8, 2, 30, 0, 0, 0}}, torch::kLong);
  const auto mask = torch::tensor({{1, 1, 1, 1, 1, 1}, {1, 1, 1, 0, 0, 0}}, torch::kLong);
  const auto weights = torch::randn({2, 6, 16});
  torch::manual_seed(11);  // dropout's masks
  Step out;
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCPU, bf16);
  out.loss = (tower->forward(ids, mask).to(torch::kFloat) * weights).sum();
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  out.loss.backward();
  for (const auto& p : tower->named_parameters())
    if (p.value().grad().defined()) out.grads[p.key()] = p.value().grad().clone();
  return out;
}

void expect_same_step(const BertConfig& config, bool frozen_embeddings, bool bf16 = false) {
  const Step plain = step(config, false, frozen_embeddings, bf16);
  const Step checkpointed = step(config, true, frozen_embeddings, bf16);
  EXPECT_TRUE(torch::equal(plain.loss, checkpointed.loss)) << config.model_type;
  ASSERT_EQ(plain.grads.size(), checkpointed.grads.size()) << config.model_type;
  EXPECT_GT(plain.grads.size(), 10u);
  for (const auto& [name, grad] : plain.grads) {
    ASSERT_TRUE(checkpointed.grads.count(name)) << name;
    EXPECT_TRUE(torch::equal(grad, checkpointed.grads.at(name))) << config.model_type << " " << name;
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

TEST(ActivationCheckpoint, OtherFamiliesSayTheyDoNotTakeIt) {
  BertConfig bert;
  bert.vocab_size = 40;
  bert.hidden_size = 16;
  bert.num_hidden_layers = 1;
  bert.num_attention_heads = 2;
  bert.intermediate_size = 24;
  BertModel tower(bert);
  try {
    tower->set_activation_checkpointing(true);
    ADD_FAILURE() << "BERT took it";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not in bert's"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(tower->set_activation_checkpointing(false));
}

}  // namespace
}  // namespace ragmig::model
