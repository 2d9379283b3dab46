// The same training code on a CUDA device: bf16 autocast, GradCache against the full batch, and a whole
// `ragmig train` run on the GPU. Labelled `cuda`; skips where there is no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#ifdef RAGMIG_TORCH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "model/bert_config.h"
#include "model/dual_encoder.h"
#include "model/embed.h"
#include "model/lora.h"
#include "model/unpad.h"
#include "model/varlen_attention.h"
#include "train/autocast_guard.h"
#include "train/fused_step.h"
#include "train/grad_step.h"
#include "train/training_data.h"
#include "train_fixture.h"
#include "support/random_adapter.h"
#include "support/tiny_bert.h"
#include "text/wordpiece.h"

namespace ragmig::train {
namespace {

#define RAGMIG_REQUIRE_CUDA() \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device"

// sqrt(sum |grad_a - grad_b|^2 / sum |grad_a|^2) over the parameters of two models of one spec.
double relative_gradient_error(model::DualEncoder& a, model::DualEncoder& b) {
  double num = 0, den = 0;
  auto pb = b->named_parameters();
  for (const auto& p : a->named_parameters()) {
    num += (p.value().grad() - pb[p.key()].grad()).pow(2).sum().item<double>();
    den += p.value().grad().pow(2).sum().item<double>();
  }
  return std::sqrt(num / den);
}

struct GpuCopies {
  model::DualEncoder padded{nullptr}, unpadded{nullptr};  ///< padded in eval mode; unpadded's query tower unpadded
};

// Two copies of `cpu`'s weights on `gpu`, after checking that the padded one's fp32 embeddings of the passages
// (ids, mask on the CPU) are the CPU model's within 1e-4.
GpuCopies gpu_copies_matching_the_cpu(model::DualEncoder& cpu, const model::EncoderSpec& spec,
                                      const torch::Tensor& ids, const torch::Tensor& mask, torch::Device gpu) {
  torch::NoGradGuard no_grad;
  cpu->eval();
  const auto on_cpu = cpu->encode_passages(ids, mask);
  GpuCopies copies{model::DualEncoder(spec), model::DualEncoder(spec)};
  auto from = cpu->named_parameters();
  for (auto* net : {&copies.padded, &copies.unpadded})
    for (auto& p : (*net)->named_parameters()) p.value().copy_(from[p.key()]);
  copies.padded->to(gpu);
  copies.unpadded->to(gpu);
  copies.padded->eval();
  copies.unpadded->query_tower()->set_unpad(true);
  EXPECT_LT((copies.padded->encode_passages(ids.to(gpu), mask.to(gpu)).cpu() - on_cpu).abs().max().item<double>(),
            1e-4);
  return copies;
}

// train.activation_checkpointing on the GPU: the recompute draws dropout from the CUDA generator as the forward
// did and runs under its bf16 autocast, so a Mistral's loss and gradients are the ones without it.
TEST(Cuda, ActivationCheckpointingGivesTheSameGradientsOnTheGpu) {
  RAGMIG_REQUIRE_CUDA();
  const model::BertConfig config = model::bert_config_from_json(
      {{"model_type", "mistral"}, {"vocab_size", 64}, {"hidden_size", 64}, {"num_hidden_layers", 3},
       {"num_attention_heads", 4}, {"num_key_value_heads", 2}, {"intermediate_size", 96},
       {"attention_dropout", 0.2}, {"max_position_embeddings", 64}},
      "config.json");
  const auto step = [&](bool checkpoint) {
    torch::manual_seed(3);
    model::BertModel tower(config);
    tower->to(torch::kCUDA);
    tower->train();
    tower->set_activation_checkpointing(checkpoint);
    const auto ids = torch::randint(1, 64, {4, 24}, torch::kLong).cuda();
    const auto mask = torch::ones_like(ids);
    const auto weights = torch::randn({4, 24, 64}).cuda();
    torch::cuda::manual_seed_all(9);
    torch::Tensor loss;
    {
      AutocastGuard autocast(torch::Device(torch::kCUDA), true);
      loss = (tower->forward(ids, mask).to(torch::kFloat) * weights).sum();
    }
    loss.backward();
    std::vector<torch::Tensor> grads = {loss.detach()};
    for (const auto& p : tower->parameters()) grads.push_back(p.grad().clone());
    return grads;
  };
  const auto plain = step(false), checkpointed = step(true);
  ASSERT_EQ(plain.size(), checkpointed.size());
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_TRUE(torch::equal(plain[i], checkpointed[i])) << i;
}

TEST(Cuda, GradCacheUnderBf16AutocastTracksTheFullBatch) {
  RAGMIG_REQUIRE_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  torch::manual_seed(3);
  model::EncoderSpec spec;
  spec.bert = testing::tiny_bert_config(100, 64, 4, 512);
  spec.bert.hidden_dropout_prob = spec.bert.attention_probs_dropout_prob = 0.0;
  model::DualEncoder net(spec);
  net->to(gpu);
  const EncodeFn encode = [&](const std::vector<TowerInput>& inputs) {
    AutocastGuard autocast(gpu, true);
    return encode_towers(net, inputs);
  };
  PairBatch batch;
  batch.q_ids = torch::randint(5, 100, {32, 16}, torch::kLong).to(gpu);
  batch.p_ids = torch::randint(5, 100, {32, 48}, torch::kLong).to(gpu);
  batch.q_mask = torch::ones_like(batch.q_ids);
  batch.p_mask = torch::ones_like(batch.p_ids);
  const auto scale = torch::full({}, 20.0, torch::TensorOptions().device(gpu));

  net->zero_grad();
  const double full = backward_full(encode, batch, scale).item<double>();
  std::vector<torch::Tensor> g_full;
  for (auto& p : net->parameters()) g_full.push_back(p.grad().clone());
  net->zero_grad();
  const double cached = backward_grad_cache(encode, batch, scale, 8).item<double>();
  // bf16 matmuls in chunks round differently from one big one: compare with a bf16-sized tolerance.
  EXPECT_NEAR(full, cached, 2e-2 * std::abs(full));
  double num = 0, den = 0;
  size_t i = 0;
  for (auto& p : net->parameters()) {
    num += (p.grad() - g_full[i]).pow(2).sum().item<double>();
    den += g_full[i].pow(2).sum().item<double>();
    ++i;
  }
  EXPECT_LT(std::sqrt(num / den), 5e-2) << "relative gradient error";
}

// Unpadded towers on the GPU run attention as variable-length flash attention over the packed tokens (a step's
// queries and passages in one pass: one joint packing); their
// embeddings and gradients agree with the padded towers' within bf16 rounding, and the fused optimiser step
// (foreach clipping, fused AdamW) moves the weights as LibTorch's per-parameter loops do.
TEST(Cuda, UnpaddedTowersAndTheFusedStepMatchThePaddedPerParameterOnes) {
  RAGMIG_REQUIRE_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  model::EncoderSpec spec;
  spec.bert = testing::tiny_bert_config(100, 64, 4, 512);
  spec.bert.hidden_dropout_prob = spec.bert.attention_probs_dropout_prob = 0.0;
  torch::manual_seed(3);
  model::DualEncoder padded(spec);
  torch::manual_seed(3);
  model::DualEncoder unpadded(spec);
  padded->to(gpu);
  unpadded->to(gpu);
  unpadded->query_tower()->set_unpad(true);
  PairBatch batch;
  batch.q_ids = torch::randint(5, 100, {16, 12}, torch::kLong).to(gpu);
  batch.p_ids = torch::randint(5, 100, {16, 40}, torch::kLong).to(gpu);
  batch.q_mask = (torch::arange(12).unsqueeze(0) < torch::randint(1, 13, {16, 1})).to(torch::kLong).to(gpu);
  batch.p_mask = (torch::arange(40).unsqueeze(0) < torch::randint(1, 41, {16, 1})).to(torch::kLong).to(gpu);
  const auto scale = torch::full({}, 20.0, torch::TensorOptions().device(gpu));
  auto run = [&](model::DualEncoder& net) {
    const EncodeFn encode = [&](const std::vector<TowerInput>& inputs) {
      AutocastGuard autocast(gpu, true);
      return encode_towers(net, inputs);
    };
    net->zero_grad();
    return backward_full(encode, batch, scale).item<double>();
  };
  const double a = run(padded), b = run(unpadded);
  EXPECT_TRUE(model::varlen_attention_used()) << "flash attention over the packed tokens";
  EXPECT_NEAR(a, b, 2e-2 * std::abs(a));
  EXPECT_LT(relative_gradient_error(padded, unpadded), 5e-2);
  auto pb = unpadded->named_parameters();

  // The fused step from the same gradients: padded's through LibTorch's loops, unpadded's through fused kernels.
  for (const auto& p : padded->named_parameters()) pb[p.key()].mutable_grad() = p.value().grad().clone();
  torch::optim::AdamW loop(padded->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
  torch::optim::AdamW fused_state(unpadded->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
  FusedAdamW fused(fused_state);
  ASSERT_TRUE(fused_step_available(gpu));
  for (int i = 0; i < 3; ++i) {
    torch::nn::utils::clip_grad_norm_(padded->parameters(), 0.5);
    loop.step();
    clip_grad_norm_on_device(unpadded->parameters(), 0.5);
    fused.step();
  }
  for (const auto& p : padded->named_parameters())
    EXPECT_LT((p.value() - pb[p.key()]).abs().max().item<double>(), 1e-5) << p.key();
}

// `ragmig eval`'s embedder on the GPU (ids through pinned memory, masks left on the host, embeddings held on the
// device and brought back at the end) gives the CPU's rows, in the input order, padded or unpadded.
TEST(Cuda, EmbeddingTextsOnTheGpuGivesTheCpusRowsInOrder) {
  RAGMIG_REQUIRE_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const char* w : {"the", "cell", "gene", "protein", "binds", "to", "a", "receptor", "in", "mice", "##s"})
    vocab.emplace_back(w);
  const text::WordPieceTokenizer tokenizer(vocab);
  std::vector<std::string> texts;
  for (int i = 0; i < 40; ++i) {
    std::string t;
    for (int w = 0; w <= (i * 7) % 23; ++w) t += vocab[static_cast<size_t>(5 + (i + w) % 11)] + " ";
    texts.push_back(t);
  }
  model::EncoderSpec spec;
  spec.bert = testing::tiny_bert_config(static_cast<int64_t>(vocab.size()), 64, 4, 512);
  torch::manual_seed(8);
  model::DualEncoder net(spec);
  const auto on_cpu = model::embed_texts(net, tokenizer, texts, false, 32, 4, torch::kCPU);
  net->to(gpu);
  for (const bool unpad : {false, true}) {
    net->query_tower()->set_unpad(unpad);
    size_t reported = 0;
    const auto on_gpu =
        model::embed_texts(net, tokenizer, texts, false, 32, 4, gpu, {}, [&](size_t done) { reported = done; });
    ASSERT_TRUE(on_gpu.device().is_cpu());
    EXPECT_EQ(reported, texts.size());
    EXPECT_LT((on_gpu - on_cpu).abs().max().item<double>(), 1e-4) << "unpad " << unpad;
  }
}

// `n` examples of token ids 5.. (queries 3-7 tokens, passages 4-14), each with its own positive passage.
TokenizedData ragged_examples(int64_t n) {
  TokenizedData data;
  for (int64_t i = 0; i < n; ++i) {
    const auto token = static_cast<int32_t>(5 + i % 60);
    data.queries.push_back(std::vector<int32_t>(static_cast<size_t>(3 + i % 5), token));
    data.passages.push_back(std::vector<int32_t>(static_cast<size_t>(4 + (7 * i) % 11), token + 20));
    data.positive.push_back(i);
    data.more_positives.emplace_back();
    data.negatives.emplace_back();
    data.batch_key.push_back(i);
  }
  return data;
}

// A batch as the trainer assembles it for a GPU: ids on the device, masks on the (pinned) host. The towers make
// their packing on the host, without waiting for the GPU, and compute exactly what they do from masks on the GPU:
// the same packing, the same embeddings bit for bit, padded or not.
TEST(Cuda, MasksOnTheHostGiveWhatMasksOnTheGpuGive) {
  RAGMIG_REQUIRE_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  const TokenizedData data = ragged_examples(12);
  const std::vector<int64_t> rows = {0, 3, 5, 7, 8, 11};
  const PairBatch batch = assemble_batch(data, rows, 1, 0, 9, 2, gpu);
  ASSERT_TRUE(batch.q_ids.is_cuda());
  ASSERT_TRUE(batch.q_mask.device().is_cpu() && batch.q_mask.is_pinned());
  const model::Packing host = model::make_packing(batch.p_mask, gpu);
  const model::Packing device = model::make_packing(batch.p_mask.to(gpu));
  EXPECT_TRUE(host.index.is_cuda());
  EXPECT_TRUE(torch::equal(host.index, device.index));
  EXPECT_TRUE(torch::equal(host.cu_seqlens, device.cu_seqlens));
  model::EncoderSpec spec;
  spec.bert = testing::tiny_bert_config(100, 64, 4, 512);
  spec.bert.hidden_dropout_prob = spec.bert.attention_probs_dropout_prob = 0.0;
  torch::manual_seed(6);
  model::DualEncoder net(spec);
  net->to(gpu);
  net->eval();
  torch::NoGradGuard no_grad;
  for (const bool unpad : {false, true}) {
    net->query_tower()->set_unpad(unpad);
    AutocastGuard autocast(gpu, true);
    EXPECT_TRUE(torch::equal(net->encode_passages(batch.p_ids, batch.p_mask),
                             net->encode_passages(batch.p_ids, batch.p_mask.to(gpu))))
        << "unpad " << unpad;
    EXPECT_TRUE(torch::equal(net->encode_queries(batch.q_ids, batch.q_mask),
                             net->encode_queries(batch.q_ids, batch.q_mask.to(gpu))))
        << "unpad " << unpad;
  }
}

// A training step on the GPU never makes the host wait for it: assembling the batch (masks stay on the host), the
// unpadded towers' packing, variable-length flash attention with dropout, InfoNCE, backward (the full batch and
// GradCache), clipping and fused AdamW only queue work, so the host runs ahead of the device. CUDA's sync debug
// mode turns any wait into an error; only reading the losses afterwards waits.
TEST(Cuda, ATrainingStepNeverWaitsForTheGpu) {
  RAGMIG_REQUIRE_CUDA();
#ifndef RAGMIG_TORCH_CUDA
  GTEST_SKIP() << "built without LibTorch's CUDA library (c10_cuda), which sets the sync debug mode";
#else
  const torch::Device gpu(torch::kCUDA, 0);
  const TokenizedData data = ragged_examples(64);
  model::EncoderSpec spec;
  spec.bert = testing::tiny_bert_config(100, 64, 4, 512);
  torch::manual_seed(7);
  model::DualEncoder net(spec);
  net->to(gpu);
  net->train();
  net->query_tower()->set_unpad(true);
  torch::optim::AdamW adamw(net->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
  ASSERT_TRUE(fused_step_available(gpu));
  FusedAdamW fused(adamw);
  const auto params = net->parameters();
  const auto scale = torch::full({}, 20.0, torch::TensorOptions().device(gpu));
  const EncodeFn encode = [&](const std::vector<TowerInput>& inputs) {
    AutocastGuard autocast(gpu, true);
    return encode_towers(net, inputs);
  };
  const auto step = [&](int64_t at, bool gradcache) {
    std::vector<int64_t> rows(16);
    for (int64_t i = 0; i < 16; ++i) rows[static_cast<size_t>(i)] = (at * 16 + i) % 64;
    const PairBatch batch = assemble_batch(data, rows, 1, 0, 9, at, gpu);
    net->zero_grad();
    auto loss = gradcache ? backward_grad_cache(encode, batch, scale, 4) : backward_full(encode, batch, scale);
    clip_grad_norm_on_device(params, 1.0);
    fused.step();
    return loss;
  };
  step(0, false);  // first calls: allocations, the optimiser's state
  step(1, true);
  torch::cuda::synchronize();
  auto& debug = c10::cuda::warning_state();
  const auto before = debug.get_sync_debug_mode();
  debug.set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  std::vector<torch::Tensor> losses;
  std::string waited;
  try {
    for (int64_t at = 2; at < 6; ++at) losses.push_back(step(at, at % 2 == 1));
  } catch (const c10::Error& e) {
    waited = e.what_without_backtrace();
  }
  debug.set_sync_debug_mode(before);
  EXPECT_EQ(waited, "") << "a step waited for the GPU";
  for (const auto& l : losses) EXPECT_TRUE(std::isfinite(l.item<double>()));
  EXPECT_TRUE(model::varlen_attention_used());
#endif
}

// MPNet on the GPU: its relative position bias goes into SDPA's mask (the memory-efficient kernel, which takes a
// bias and returns its gradient), and unpadded MPNet towers pad around that kernel (flash attention takes no
// bias). fp32 on the GPU matches the CPU; bf16 unpadded matches bf16 padded, the bias's gradient included.
TEST(Cuda, MPNetTowersMatchTheCpuAndTheirUnpaddedSelves) {
  RAGMIG_REQUIRE_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  model::EncoderSpec spec;
  spec.bert = testing::as_mpnet(testing::tiny_bert_config(100, 64, 4, 66));
  spec.bert.hidden_dropout_prob = spec.bert.attention_probs_dropout_prob = 0.0;
  torch::manual_seed(4);
  model::DualEncoder cpu(spec);
  {
    torch::NoGradGuard no_grad;
    cpu->query_tower()->encoder->relative_attention_bias->weight.normal_(0.0, 2.0);
  }
  const auto ids = torch::randint(5, 100, {8, 40}, torch::kLong);
  const auto mask = (torch::arange(40).unsqueeze(0) < torch::randint(1, 41, {8, 1})).to(torch::kLong);
  auto [padded, unpadded] = gpu_copies_matching_the_cpu(cpu, spec, ids, mask, gpu);
  const auto direction = torch::randn({8, 64}).to(gpu);
  auto grads = [&](model::DualEncoder& net) {
    AutocastGuard autocast(gpu, true);
    net->zero_grad();
    // Against a fixed direction: the embeddings are L2-normalised, so their squares would sum to a constant.
    (net->encode_passages(ids.to(gpu), mask.to(gpu)) * direction).sum().backward();
    return net->query_tower()->encoder->relative_attention_bias->weight.grad().to(torch::kCPU, torch::kFloat);
  };
  const auto a = grads(padded), b = grads(unpadded);
  EXPECT_GT(a.abs().max().item<double>(), 0.0);
  EXPECT_LT((a - b).norm().item<double>() / a.norm().item<double>(), 5e-2) << "relative bias gradient error";
}

// train.bf16_residual on the GPU, where autocast's policy runs LayerNorm in fp32: the stream stays bf16 to the last
// LayerNorm (padded, unpadded, one pass over queries and passages), within bf16 rounding of autocast's fp32 stream in
// states and gradients.
TEST(Cuda, TheBf16ResidualStreamStaysBf16UnderCudaAutocast) {
  RAGMIG_REQUIRE_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  auto config = testing::tiny_bert_config(100, 64, 4, 66);
  config.hidden_dropout_prob = config.attention_probs_dropout_prob = 0.0;
  const auto ids = torch::randint(5, 100, {8, 40}, torch::kLong).to(gpu);
  const auto mask = (torch::arange(40).unsqueeze(0) < torch::randint(1, 41, {8, 1})).to(torch::kLong).to(gpu);
  for (const bool unpad : {false, true}) {
    SCOPED_TRACE(unpad ? "unpadded" : "padded");
    torch::manual_seed(9);
    model::BertModel fp32_stream(config);
    torch::manual_seed(9);
    model::BertModel bf16_stream(config);
    for (auto* m : {&fp32_stream, &bf16_stream}) {
      (*m)->to(gpu);
      (*m)->set_unpad(unpad);
    }
    bf16_stream->set_bf16_residual(true);
    torch::Tensor a, b;
    {
      AutocastGuard autocast(gpu, true);
      a = fp32_stream->forward(ids, mask);
      b = bf16_stream->forward(ids, mask);
      if (unpad) {
        const auto [x, y] = bf16_stream->forward_pair(ids, mask, ids.slice(0, 0, 3), mask.slice(0, 0, 3));
        EXPECT_EQ(x.scalar_type(), torch::kBFloat16);
        EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
      }
    }
    EXPECT_EQ(a.scalar_type(), torch::kFloat) << "autocast's LayerNorm: fp32";
    EXPECT_EQ(b.scalar_type(), torch::kBFloat16) << "a LayerNorm widened the stream";
    const auto keep = mask.unsqueeze(-1).to(torch::kFloat);
    EXPECT_LT(((b.to(torch::kFloat) - a) * keep).abs().max().item<double>(), 0.15);
    const auto direction = torch::randn_like(a);
    (a * keep * direction).sum().backward();
    (b.to(torch::kFloat) * keep * direction).sum().backward();
    double num = 0, den = 0;
    auto pb = bf16_stream->named_parameters();
    for (const auto& p : fp32_stream->named_parameters()) {
      if (p.key().find("key.bias") != std::string::npos) continue;  // zero but for rounding
      ASSERT_TRUE(pb[p.key()].grad().defined()) << p.key();
      num += (p.value().grad() - pb[p.key()].grad()).pow(2).sum().item<double>();
      den += p.value().grad().pow(2).sum().item<double>();
    }
    EXPECT_LT(std::sqrt(num / den), 5e-2) << "relative gradient error";
  }
}

// ModernBERT on the GPU: fp32 matches the CPU; unpadded bf16 towers run variable-length flash attention, with the
// window on sliding layers (shorter here than the passages, so it matters), and match the padded bf16 towers (whose
// window is a mask in SDPA): embeddings and gradients within bf16 rounding.
TEST(Cuda, ModernBertTowersMatchTheCpuAndTheirUnpaddedSelves) {
  RAGMIG_REQUIRE_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  model::EncoderSpec spec;
  spec.bert = testing::tiny_bert_config(100, 64, 4, 512);
  spec.bert.num_hidden_layers = 3;
  spec.bert = testing::as_modernbert(spec.bert, 8);  // 4 tokens each side on layers 1 and 2
  spec.bert.hidden_dropout_prob = spec.bert.attention_probs_dropout_prob = 0.0;
  torch::manual_seed(5);
  model::DualEncoder cpu(spec);
  const auto ids = torch::randint(5, 100, {8, 40}, torch::kLong);
  const auto mask = (torch::arange(40).unsqueeze(0) < torch::randint(1, 41, {8, 1})).to(torch::kLong);
  auto [padded, unpadded] = gpu_copies_matching_the_cpu(cpu, spec, ids, mask, gpu);
  padded->train();
  const auto direction = torch::randn({8, 64}).to(gpu);
  auto run = [&](model::DualEncoder& net) {
    AutocastGuard autocast(gpu, true);
    net->zero_grad();
    const auto out = net->encode_passages(ids.to(gpu), mask.to(gpu));
    (out * direction).sum().backward();  // a fixed direction: the squares of normalised rows sum to a constant
    return out.to(torch::kCPU, torch::kFloat);
  };
  const auto a = run(padded), b = run(unpadded);
  EXPECT_TRUE(model::varlen_attention_used()) << "flash attention over the packed tokens";
  EXPECT_LT((a - b).abs().max().item<double>(), 3e-2);
  EXPECT_LT(relative_gradient_error(padded, unpadded), 5e-2);
}

// Qwen3 and Gemma 3 on the GPU: fp32 matches the CPU (Qwen3's causal SDPA and Gemma 3's masked SDPA with its own
// scale, and its sliding layers' blocks of keys at 40 tokens, on CUDA's kernels against the CPU's), and under bf16
// autocast the embeddings and a training step's gradients track fp32's within bf16 rounding (set_unpad is ignored:
// both run padded).
TEST(Cuda, Qwen3AndGemma3TowersMatchTheCpuAndTrainUnderBf16) {
  RAGMIG_REQUIRE_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  const nlohmann::json shape = {
      {"vocab_size", 100},        {"hidden_size", 64}, {"num_hidden_layers", 2},  {"num_attention_heads", 4},
      {"num_key_value_heads", 2}, {"head_dim", 32},    {"intermediate_size", 96}, {"max_position_embeddings", 64}};
  for (const std::string family : {"qwen3", "gemma3_text"}) {
    SCOPED_TRACE(family);
    nlohmann::json config = shape;
    config["model_type"] = family;
    if (family == "gemma3_text") {
      config["use_bidirectional_attention"] = true;
      config["sliding_window"] = 8;  // 4 tokens each side: 40-token rows run in blocks of keys
      config["layer_types"] = {"sliding_attention", "full_attention"};
    }
    model::EncoderSpec spec;
    spec.bert = model::bert_config_from_json(config, family);
    if (family == "qwen3") spec.pooling = model::Pooling::LastToken;
    torch::manual_seed(6);
    model::DualEncoder cpu(spec);
    const auto ids = torch::randint(5, 100, {8, 40}, torch::kLong);
    const auto mask = (torch::arange(40).unsqueeze(0) < torch::randint(1, 41, {8, 1})).to(torch::kLong);
    auto [fp32, bf16] = gpu_copies_matching_the_cpu(cpu, spec, ids, mask, gpu);
    const auto direction = torch::randn({8, 64}).to(gpu);
    auto run = [&](model::DualEncoder& net, bool autocast_on) {
      AutocastGuard autocast(gpu, autocast_on);
      net->train();
      net->zero_grad();
      const auto out = net->encode_passages(ids.to(gpu), mask.to(gpu));
      (out * direction).sum().backward();
      return out.to(torch::kCPU, torch::kFloat);
    };
    const auto a = run(fp32, false), b = run(bf16, true);
    EXPECT_LT((a - b).abs().max().item<double>(), 3e-2);
    EXPECT_LT(relative_gradient_error(fp32, bf16), 5e-2);
  }
}

// Serving's adapter routes on the GPU (model/lora_linear.h): a batch whose rows use two adapters and the base model
// (low-rank products added to the fused q, k, v product, on the calling thread), and a batch all one adapter's
// (the merged weight W + s B A), each as on the CPU.
TEST(Cuda, RoutedAndMergedAdaptersOnTheGpuEmbedAsOnTheCpu) {
  RAGMIG_REQUIRE_CUDA();
  const torch::Device gpu(torch::kCUDA, 0);
  const auto adapter = [](uint64_t seed) {
    model::BertModel t(testing::tiny_bert_config(50, 32, 4, 16));
    model::LoraSpec spec;
    spec.rank = 4;
    spec.alpha = 8;
    spec.targets = {"query", "key", "value", "dense"};
    return testing::random_lora_adapter(t, spec, seed, 0.3);
  };
  const model::LoraAdapter a = adapter(1), b = adapter(2);
  torch::manual_seed(3);
  model::BertModel tower(testing::tiny_bert_config(50, 32, 4, 16));
  tower->eval();
  torch::manual_seed(4);
  const auto ids = torch::randint(5, 50, {6, 12}, torch::kLong);
  const auto mask = torch::ones({6, 12}, torch::kLong);
  torch::NoGradGuard no_grad;
  const auto embed = [&](const std::vector<model::AdapterRange>& ranges, torch::Device device) {
    const model::AdapterRouting routing(tower, ranges);
    return tower->forward(ids.to(device), mask.to(device)).cpu();
  };
  const std::vector<std::vector<model::AdapterRange>> batches = {{{0, 2, &a}, {2, 3, nullptr}, {3, 6, &b}},
                                                                 {{0, 6, &a}}};
  std::vector<torch::Tensor> on_cpu;
  for (const auto& ranges : batches) on_cpu.push_back(embed(ranges, torch::kCPU));
  tower->to(gpu);
  model::LoraAdapter a_gpu = a, b_gpu = b;  // on the device, as ragmig serve loads them
  for (auto* moved : {&a_gpu, &b_gpu})
    for (auto& [name, f] : moved->layers) {
      f.a = f.a.to(gpu);
      f.b = f.b.to(gpu);
    }
  for (size_t i = 0; i < batches.size(); ++i) {
    auto ranges = batches[i];
    for (auto& r : ranges) r.adapter = r.adapter == &a ? &a_gpu : r.adapter == &b ? &b_gpu : nullptr;
    EXPECT_LT((embed(ranges, gpu) - on_cpu[i]).abs().max().item<double>(), 1e-4) << "batch " << i;
  }
}

TEST(Cuda, TrainRunsOnTheGpu) {
  RAGMIG_REQUIRE_CUDA();
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  testing::ScratchDir dir;
  testing::write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", testing::tiny_config(dir / "pairs.jsonl", "device = \"cuda\"\naccumulation = \"gradcache\"\nchunk_size = 4\n"));
  auto r = testing::run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string(), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string events = read_file(dir / "run/events.jsonl");
  EXPECT_NE(events.find("\"device\":\"cuda:0\""), std::string::npos);
  EXPECT_NE(events.find("\"precision\":\"bf16\""), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir / "run/model/model.safetensors"));
  // Progress reports the memory dynamic batch sizes jobs by: the allocator's peak above the state that does not
  // grow with the batch (weights, gradients, AdamW's moments).
  int reported = 0;
  std::istringstream lines(events);
  for (std::string line; std::getline(lines, line);) {
    const auto e = nlohmann::json::parse(line);
    if (e["event"] != "progress") continue;
    ASSERT_TRUE(e.contains("memory_mb") && e.contains("state_memory_mb")) << line;
    EXPECT_GT(e["state_memory_mb"].get<double>(), 0) << line;
    EXPECT_GT(e["memory_mb"].get<double>(), e["state_memory_mb"].get<double>()) << line;
    ++reported;
  }
  EXPECT_GT(reported, 0);
}

}  // namespace
}  // namespace ragmig::train
