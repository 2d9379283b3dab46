// The speed paths against their references (label `perf`): fused attention against the plain one in value
// and gradient, token-budget batches (their plan, and embeddings equal to one text at a time), and the
// precision choice: bf16 only where the hardware has it, a forced bf16 close to fp32.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/error.h"
#include "eval/encoder.h"
#include "eval_fixture.h"
#include "model/bert.h"
#include "model/embed.h"
#include "model/precision.h"
#include "support/tiny_bert.h"

namespace ragmig {
namespace {

using Batches = std::vector<std::pair<size_t, size_t>>;

TEST(TokenBudget, LeastPaddingSplitsShortFromLongWhenItPays) {
  // Ten queries of 20 tokens and ten passages of 256: one pass computes 20 x 256 = 5120 tokens, two passes
  // 10 x 20 + 10 x 256 = 2760 plus the second pass's cost.
  std::vector<size_t> mix(10, 20);
  mix.insert(mix.end(), 10, 256);
  EXPECT_EQ(model::least_padding_batches(mix, 1 << 20, 256), (Batches{{0, 10}, {10, 20}}));
  // When a pass costs more than the padding it saves, one pass.
  EXPECT_EQ(model::least_padding_batches(mix, 1 << 20, 5000), (Batches{{0, 20}}));
  // The budget still bounds a pass; a text longer than the budget is alone; nothing is dropped.
  EXPECT_EQ(model::least_padding_batches({2, 2, 2, 2, 10, 10, 30}, 20, 1), (Batches{{0, 4}, {4, 6}, {6, 7}}));
  EXPECT_EQ(model::least_padding_batches({}, 20, 1), Batches{});
  EXPECT_EQ(model::least_padding_batches({50}, 20, 1), (Batches{{0, 1}}));
  // Never more padded tokens (plus pass costs) than token_budget_batches' plan.
  std::vector<size_t> lengths;
  for (size_t i = 0; i < 300; ++i) lengths.push_back(1 + (i * i * 7) % 251);
  std::sort(lengths.begin(), lengths.end());
  auto cost = [&](const Batches& plan) {
    size_t c = 0;
    for (const auto& [b, e] : plan) c += (e - b) * lengths[e - 1] + 64;
    return c;
  };
  const Batches best = model::least_padding_batches(lengths, 4096, 64);
  EXPECT_LE(cost(best), cost(model::token_budget_batches(lengths, 4096)));
  size_t next = 0;
  for (const auto& [b, e] : best) {
    EXPECT_EQ(b, next);
    EXPECT_TRUE(e - b == 1 || (e - b) * lengths[e - 1] <= 4096);
    next = e;
  }
  EXPECT_EQ(next, lengths.size());
}

TEST(TokenBudget, BatchesPackShortTextsAndNeverSplitOrDrop) {
  // Budget 20: four texts of 2 (8 tokens; a fifth of length 10 would pad all to 50), two of 10, one of 30 alone.
  EXPECT_EQ(model::token_budget_batches({2, 2, 2, 2, 10, 10, 30}, 20), (Batches{{0, 4}, {4, 6}, {6, 7}}));
  EXPECT_EQ(model::token_budget_batches({}, 20), Batches{});
  EXPECT_EQ(model::token_budget_batches({5}, 1), (Batches{{0, 1}}));
  // Every text is in exactly one batch, in order, and each batch but a lone long text fits the budget.
  std::vector<size_t> lengths;
  for (size_t i = 0; i < 200; ++i) lengths.push_back(1 + (i * i) % 97);
  std::sort(lengths.begin(), lengths.end());
  size_t next = 0;
  for (const auto& [begin, end] : model::token_budget_batches(lengths, 256)) {
    EXPECT_EQ(begin, next);
    EXPECT_GT(end, begin);
    if (end - begin > 1) {
      EXPECT_LE((end - begin) * lengths[end - 1], 256u);
    }
    next = end;
  }
  EXPECT_EQ(next, lengths.size());
}

TEST(TokenBudget, BucketedEmbeddingsEqualUnbucketed) {
  testing::ScratchDir dir;
  testing::write_random_model(dir / "model");
  eval::EmbedOptions o;
  o.batch_size = 2;  // a budget of 2 x 64 tokens: the short texts below go five or more at a time
  o.precision = "fp32";
  eval::Encoder encoder((dir / "model").string(), "cpu", o);
  std::vector<std::string> texts = {"lava", "the coral", "forests", "rivers carry sediment to the sea", "", "the sea"};
  for (int i = 0; i < 20; ++i) texts.push_back(std::string(static_cast<size_t>(i % 7), 'a') + " glaciers carve valleys");
  const index::FloatMatrix batched = encoder.embed(texts, false);
  ASSERT_EQ(batched.rows, static_cast<int64_t>(texts.size()));
  for (int64_t i = 0; i < batched.rows; ++i) {
    const index::FloatMatrix one = encoder.embed({texts[static_cast<size_t>(i)]}, false);
    for (int64_t j = 0; j < one.cols; ++j) ASSERT_NEAR(batched.row(i)[j], one.row(0)[j], 1e-5) << "text " << i << " dim " << j;
  }
}

TEST(FusedAttention, EqualsPlainInValueAndGradient) {
  if (!model::fused_attention_available()) GTEST_SKIP() << "LibTorch " << TORCH_VERSION << " has no scaled_dot_product_attention";
  auto config = testing::tiny_bert_config(50, 32, 4, 16);
  config.hidden_dropout_prob = 0;
  config.attention_probs_dropout_prob = 0;  // training mode with the same (no) dropout on both paths
  auto ids = torch::randint(1, 50, {3, 11}, torch::kLong);
  auto mask = torch::ones({3, 11}, torch::kLong);
  mask[1].slice(0, 4).fill_(0);
  mask[2].slice(0, 9).fill_(0);
  auto run = [&](model::AttentionImpl impl) {
    torch::manual_seed(5);
    model::BertModel m(config);
    m->train();
    m->set_attention_impl(impl);
    auto out = m->forward(ids, mask);
    // Only real positions: what pooling reads, and what the loss reaches.
    (out * mask.unsqueeze(-1)).pow(2).sum().backward();
    std::vector<torch::Tensor> grads;
    for (const auto& p : m->parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
    return std::make_pair(out.detach() * mask.unsqueeze(-1), grads);
  };
  const auto [plain, plain_grads] = run(model::AttentionImpl::Manual);
  const auto [fused, fused_grads] = run(model::AttentionImpl::Fused);
  EXPECT_LT((plain - fused).abs().max().item<float>(), 1e-5f);
  ASSERT_EQ(plain_grads.size(), fused_grads.size());
  for (size_t i = 0; i < plain_grads.size(); ++i) {
    const float scale = std::max(1.0f, plain_grads[i].abs().max().item<float>());
    EXPECT_LT((plain_grads[i] - fused_grads[i]).abs().max().item<float>() / scale, 1e-4f) << "parameter " << i;
  }
}

TEST(Precision, AutoTakesBf16OnlyWhereTheHardwareRunsItFaster) {
  using model::CpuBf16;
  using model::Precision;
  EXPECT_EQ(model::choose_precision("auto", true, CpuBf16::Emulated).precision, Precision::Bf16);  // CUDA
  EXPECT_EQ(model::choose_precision("auto", true, CpuBf16::Slower).precision, Precision::Bf16);
  EXPECT_EQ(model::choose_precision("auto", false, CpuBf16::Faster).precision, Precision::Bf16);  // AMX, AMD
  EXPECT_EQ(model::choose_precision("auto", false, CpuBf16::Emulated).precision, Precision::Fp32);
  EXPECT_NE(model::choose_precision("auto", false, CpuBf16::Emulated).reason.find("no native bf16"), std::string::npos);
  const auto slower = model::choose_precision("auto", false, CpuBf16::Slower);  // Intel's AVX512-BF16 alone
  EXPECT_EQ(slower.precision, Precision::Fp32);
  EXPECT_NE(slower.reason.find("faster than bf16"), std::string::npos) << slower.reason;
  EXPECT_EQ(model::choose_precision("fp32", true, CpuBf16::Faster).precision, Precision::Fp32);
  const auto forced = model::choose_precision("bf16", false, CpuBf16::Emulated);
  EXPECT_EQ(forced.precision, Precision::Bf16);
  EXPECT_NE(forced.reason.find("emulated"), std::string::npos) << forced.reason;
  const auto forced_slower = model::choose_precision("bf16", false, CpuBf16::Slower);
  EXPECT_EQ(forced_slower.precision, Precision::Bf16);
  EXPECT_NE(forced_slower.reason.find("slower than fp32"), std::string::npos) << forced_slower.reason;
  EXPECT_EQ(model::choose_precision("bf16", true, CpuBf16::Slower).reason, "bf16 as asked");  // on CUDA
  try {
    model::choose_precision("fp16", false, CpuBf16::Emulated, "train.precision");
    ADD_FAILURE() << "fp16 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("train.precision: unknown precision 'fp16'"), std::string::npos) << e.what();
  }
}

// The classes bench/encode's matmul peaks put CPUs in (model/precision.h): AMX is fast whoever makes it; AVX512-BF16
// alone is twice fp32's rate on AMD's Zen 4, half on an Emerald Rapids Xeon whose virtual machine hides AMX.
TEST(Precision, CpusAreClassedByTheirBf16Units) {
  using model::CpuBf16;
  EXPECT_EQ(model::classify_cpu_bf16(true, true, true), CpuBf16::Faster);  // AMX Xeon
  EXPECT_EQ(model::classify_cpu_bf16(true, false, true), CpuBf16::Faster);
  EXPECT_EQ(model::classify_cpu_bf16(false, true, true), CpuBf16::Slower);   // Intel, AVX512-BF16 alone
  EXPECT_EQ(model::classify_cpu_bf16(false, true, false), CpuBf16::Faster);  // AMD Zen 4
  EXPECT_EQ(model::classify_cpu_bf16(false, false, true), CpuBf16::Emulated);
  EXPECT_EQ(model::classify_cpu_bf16(false, false, false), CpuBf16::Emulated);  // AVX2 EPYC, ARM
}

TEST(Precision, EncoderAutoFollowsTheCpuAndForcedBf16IsCloseToFp32) {
  testing::ScratchDir dir;
  testing::write_random_model(dir / "model");
  const std::vector<std::string> texts = {"lava", "the coral reef", "rivers carry sediment to the sea"};
  eval::EmbedOptions o;
  eval::Encoder automatic((dir / "model").string(), "cpu", o);
  EXPECT_EQ(automatic.precision(), model::cpu_bf16() == model::CpuBf16::Faster ? "bf16" : "fp32")
      << automatic.precision_reason();
  o.precision = "fp32";
  const index::FloatMatrix full = eval::Encoder((dir / "model").string(), "cpu", o).embed(texts, false);
  o.precision = "bf16";  // what a CPU with fast bf16 runs; emulated here if it has none, and still correct
  eval::Encoder half((dir / "model").string(), "cpu", o);
  EXPECT_EQ(half.precision(), "bf16");
  const index::FloatMatrix low = half.embed(texts, false);
  ASSERT_EQ(low.rows, full.rows);
  for (int64_t i = 0; i < full.rows; ++i) {
    double dot = 0;
    for (int64_t j = 0; j < full.cols; ++j) dot += full.row(i)[j] * low.row(i)[j];
    EXPECT_GT(dot, 0.99) << "text " << i << ": bf16 embedding far from fp32 (both unit length)";
  }
}

}  // namespace
}  // namespace ragmig
