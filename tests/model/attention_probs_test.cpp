// model/attention_probs.h: the fused CPU path (bias, softmax and keyed dropout in one pass; the mask inside softmax's
// backward) gives the composite of LibTorch's ops' outputs and gradients, the composite's masks bit for bit, the same
// output without a graph (GradCache's first pass), whatever the thread count; the loops of
// model/softmax_dropout_kernels.h on rows that start mid-byte of the mask's bits and end mid-vector; the blocked path
// (blocked_attention) gives the plain path's outputs, gradients and masks from q, k, v laid out as BERT's projection
// lays them out, block after block.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>
#include <functional>
#include <vector>

#include "model/attention_probs.h"
#include "model/keyed_dropout.h"
#include "model/keyed_dropout_kernels.h"
#include "model/softmax_dropout_kernels.h"
#include "train/autocast_guard.h"

namespace ragmig::model {
namespace {

// [B, 1, 1, L] padding bias: the last `padded` keys of batch row 1 masked with the dtype's lowest value.
torch::Tensor padding_bias(int64_t b, int64_t l, int64_t padded, torch::ScalarType dtype) {
  torch::Tensor bias = torch::zeros({b, 1, 1, l}, dtype);
  bias[1].narrow(-1, l - padded, padded).fill_(-3.3895313892515355e38);  // bf16's lowest, finite in fp32 too
  return bias;
}

struct Outcome {
  std::vector<torch::Tensor> values;  // output, grad of scores, of v, of the learned bias
  int64_t next_draw = 0;              // the generator's next draw after the call
};

using Attend = std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&)>;

// One forward and backward of `fn` on fresh copies of the inputs, the generator seeded as every run's.
Outcome run_once(const Attend& fn, const torch::Tensor& scores_in, const torch::Tensor& bias_in,
                 const torch::Tensor& v_in, bool bf16) {
  const torch::Tensor scores = scores_in.clone().requires_grad_(true), v = v_in.clone().requires_grad_(true);
  const torch::Tensor learned = bias_in.defined() ? bias_in.clone().requires_grad_(true) : torch::Tensor();
  torch::manual_seed(11);
  torch::Tensor out;
  {
    train::AutocastGuard autocast(torch::kCPU, bf16);
    // Under autocast the caller's scores and v are bf16, as a matmul's and a linear's outputs are.
    const auto s = bf16 ? scores.to(torch::kBFloat16) : scores, vv = bf16 ? v.to(torch::kBFloat16) : v;
    out = fn(s, learned.defined() ? learned.to(s.scalar_type()) : learned, vv);
  }
  (out.to(torch::kFloat) * torch::linspace(-1, 1, out.numel()).view(out.sizes())).sum().backward();
  Outcome r;
  r.values = {out.detach().to(torch::kFloat), scores.grad(), v.grad(),
              learned.defined() ? learned.grad() : torch::zeros({1})};
  r.next_draw = static_cast<int64_t>(keyed_dropout_key());
  return r;
}

// Fused and composite agree (to rounding) on outputs and gradients, with a padding bias, a learned bias (MPNet's,
// its gradient summed over the batch) or none, with and without dropout, in fp32 and under bf16 autocast, at lengths
// whose rows start mid-byte of the mask bits and end mid-vector; each draws the generator once per call.
TEST(AttentionProbs, TheFusedNodeGivesTheCompositesOutputsAndGradients) {
  if (!softmax_dropout_vectorised()) GTEST_SKIP() << "no AVX-512: the composite is all there is";
  for (const bool bf16 : {false, true}) {
    for (const int64_t l : {int64_t{13}, int64_t{37}, int64_t{70}}) {
      for (const double p : {0.0, 0.3}) {
        for (const int bias_kind : {0, 1, 2}) {  // padding, padding + learned, none
          SCOPED_TRACE(::testing::Message() << "bf16 " << bf16 << " L " << l << " p " << p << " bias " << bias_kind);
          torch::manual_seed(static_cast<uint64_t>(l));
          const torch::Tensor scores = torch::randn({2, 3, l, l}) * 3, v = torch::randn({2, 3, l, 8});
          const torch::Tensor padding = padding_bias(2, l, l / 3, torch::kFloat);
          const torch::Tensor learned = bias_kind == 1 ? torch::randn({1, 3, l, l}) : torch::Tensor();
          auto with_bias = [&](auto attend) {
            return [&, attend](const torch::Tensor& s, const torch::Tensor& b, const torch::Tensor& vv) {
              torch::Tensor bias;
              if (bias_kind != 2) bias = padding.to(s.scalar_type());
              if (b.defined()) bias = b + bias;
              return attend(s, bias, vv, p, true);
            };
          };
          const Outcome fused = run_once(with_bias(attention_probs_matmul), scores, learned, v, bf16);
          const Outcome composite = run_once(with_bias(attention_probs_matmul_composite), scores, learned, v, bf16);
          // bf16: the composite rounds scores + bias to bf16 before softmax (2^-9 of logits up to ~15 here), the
          // fused path does not; and each rounds its outputs to bf16.
          const double tol = bf16 ? 6e-2 : 2e-5;
          for (size_t i = 0; i < fused.values.size(); ++i) {
            EXPECT_TRUE(torch::allclose(fused.values[i], composite.values[i], tol, tol))
                << i << ": " << (fused.values[i] - composite.values[i]).abs().max().item<double>();
            if (i < 3 || bias_kind == 1) {
              EXPECT_GT(fused.values[i].abs().sum().item<double>(), 0) << i;
            }
          }
          EXPECT_EQ(fused.next_draw, composite.next_draw) << "the same draws of the generator";
        }
      }
    }
  }
}

// Without a graph (no_grad: GradCache's first pass) the fused path gives the graph's output bit for bit, and neither
// depends on the thread count (three threads: ranges of rows that start mid-batch, their bias rows counted from there).
TEST(AttentionProbs, WithoutAGraphOrWithOneThreadTheSameOutput) {
  if (!softmax_dropout_vectorised()) GTEST_SKIP() << "no AVX-512";
  torch::manual_seed(3);
  const torch::Tensor scores = torch::randn({4, 3, 97, 97}).to(torch::kBFloat16), v = torch::randn({4, 3, 97, 16});
  torch::Tensor bias = padding_bias(4, 97, 20, torch::kBFloat16);
  bias[2].narrow(-1, 0, 50).fill_(-3.3895313892515355e38);  // batch rows 1 and 2 masked differently
  auto call = [&](bool graph) {
    torch::manual_seed(8);
    const torch::Tensor s = graph ? scores.clone().requires_grad_(true) : scores;
    return attention_probs_matmul(s, bias, v.to(torch::kBFloat16), 0.1, true).detach();
  };
  const int threads = at::get_num_threads();
  at::set_num_threads(3);
  const torch::Tensor with_graph = call(true);
  torch::Tensor without;
  {
    torch::NoGradGuard no_grad;
    without = call(false);
  }
  EXPECT_TRUE(torch::equal(with_graph, without));
  at::set_num_threads(1);
  const torch::Tensor one_thread = call(true);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(with_graph, one_thread));
}

// The loops themselves: dropped is multiply_by_mask_bits(probs) byte for byte (the composite's product of the same
// probabilities), rows are softmax of scores + bias to a float's rounding (bf16: one step of its rounding),
// including probabilities down past float's normal range, and masked keys get exactly 0.
TEST(AttentionProbs, TheLoopsDropTheirOwnProbabilitiesWithTheKeyedMask) {
  if (!softmax_dropout_vectorised()) GTEST_SKIP() << "no AVX-512";
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{29}, int64_t{261}}) {
    const int64_t rows = 37;
    torch::manual_seed(n);
    // Scores spread over [-100, 0]: probabilities from ~1 down past float's smallest normal (exp(-87.3)).
    const torch::Tensor scores = torch::rand({rows, n}) * -100;
    torch::Tensor bias = torch::zeros({rows, n});
    if (n > 2) bias.narrow(1, n - 2, 2).fill_(-3.3895313892515355e38);
    std::vector<uint8_t> bits((rows * n + 7) / 8);
    fill_keep_bits(rows * n, 0.25, 99, bits.data());
    auto check = [&](auto tag, torch::ScalarType dtype, double rel) {
      using T = decltype(tag);
      const torch::Tensor s = scores.to(dtype), b = bias.to(dtype);
      RowBias<T> row_bias;
      row_bias.data = b.data_ptr<T>();
      row_bias.sizes[3] = rows;
      row_bias.strides[3] = n;
      const T scale = static_cast<T>(static_cast<float>(1.0 / 0.75));
      torch::Tensor probs = torch::empty_like(s), dropped = torch::empty_like(s), alone = torch::empty_like(s);
      softmax_dropout_rows<T>(s.data_ptr<T>(), row_bias, rows, n, bits.data(), scale, probs.data_ptr<T>(),
                              dropped.data_ptr<T>());
      softmax_dropout_rows<T>(s.data_ptr<T>(), row_bias, rows, n, bits.data(), scale, nullptr, alone.data_ptr<T>());
      torch::Tensor expected = torch::empty_like(s);
      multiply_by_mask_bits_scalar(probs.data_ptr<T>(), expected.data_ptr<T>(), bits.data(), rows * n, scale);
      EXPECT_EQ(std::memcmp(dropped.data_ptr(), expected.data_ptr(), rows * n * sizeof(T)), 0) << n;
      EXPECT_EQ(std::memcmp(alone.data_ptr(), expected.data_ptr(), rows * n * sizeof(T)), 0) << n;
      // The reference in the dtype's precision: a relative error per element, past exp's smallest normal result.
      const torch::Tensor ref = torch::softmax(s.to(torch::kDouble) + b.to(torch::kDouble), -1);
      const torch::Tensor got = probs.to(torch::kDouble), normal = ref > 1e-37;
      const double worst = ((got - ref).abs() / ref).masked_select(normal).max().item<double>();
      EXPECT_LT(worst, rel) << n;
      EXPECT_LT(((got - ref).abs() * ~normal).max().item<double>(), 1e-37) << n;  // the rest: 0 or nearly
      if (n > 2) {
        EXPECT_EQ(probs.narrow(1, n - 2, 2).abs().sum().item<double>(), 0) << n;
      }
      EXPECT_NEAR(probs.to(torch::kDouble).sum(-1).mean().item<double>(), 1.0, rel * 4) << n;
      // Without the mask: dropped is probs.
      torch::Tensor plain = torch::empty_like(s);
      softmax_dropout_rows<T>(s.data_ptr<T>(), row_bias, rows, n, nullptr, scale, plain.data_ptr<T>(), nullptr);
      EXPECT_TRUE(torch::equal(plain, probs)) << n;
    };
    check(float{}, torch::kFloat, 1e-5);  // x - max rounds to float: 80 x 2^-24 relative in exp
    check(c10::BFloat16{}, torch::kBFloat16, 1.0 / 128);
  }
}

// The backward loop is softmax's backward of the masked gradient (against the formula in double), and remakes the
// forward's dropped probabilities on the way.
TEST(AttentionProbs, TheBackwardLoopIsSoftmaxsBackwardOfTheMaskedGradient) {
  if (!softmax_dropout_vectorised()) GTEST_SKIP() << "no AVX-512";
  for (const int64_t n : {int64_t{5}, int64_t{16}, int64_t{53}}) {
    const int64_t rows = 19;
    torch::manual_seed(n);
    const torch::Tensor probs = torch::softmax(torch::randn({rows, n}) * 2, -1), grad = torch::randn({rows, n});
    std::vector<uint8_t> bits((rows * n + 7) / 8);
    fill_keep_bits(rows * n, 0.4, 5, bits.data());
    const float scale = static_cast<float>(1.0 / 0.6);
    const torch::Tensor mask = keyed_dropout_mask(rows * n, 0.4, 5, torch::kDouble).view({rows, n});
    const torch::Tensor g = grad.to(torch::kDouble) * mask, p = probs.to(torch::kDouble);
    const torch::Tensor expected = p * (g - (g * p).sum(-1, true));
    torch::Tensor got = grad.clone(), dropped = torch::empty_like(probs), expected_dropped = torch::empty_like(probs);
    softmax_dropout_backward_rows<float>(got.data_ptr<float>(), probs.data_ptr<float>(), rows, n, bits.data(), scale,
                                         dropped.data_ptr<float>());
    EXPECT_TRUE(torch::allclose(got.to(torch::kDouble), expected, 1e-5, 1e-6)) << n;
    // The forward's dropped again, on the way: the mask's product bit for bit.
    multiply_by_mask_bits_scalar(probs.data_ptr<float>(), expected_dropped.data_ptr<float>(), bits.data(), rows * n,
                                 scale);
    EXPECT_TRUE(torch::equal(dropped, expected_dropped)) << n;
    torch::Tensor unmasked = grad.clone();
    softmax_dropout_backward_rows<float>(unmasked.data_ptr<float>(), probs.data_ptr<float>(), rows, n, nullptr, scale);
    const torch::Tensor g0 = grad.to(torch::kDouble);
    EXPECT_TRUE(torch::allclose(unmasked.to(torch::kDouble), p * (g0 - (g0 * p).sum(-1, true)), 1e-5, 1e-6)) << n;
  }
}

// The plain path BERT ran before blocked_attention: the scores' product, then attention_probs_matmul.
torch::Tensor plain_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& bias, double scale, double p) {
  return attention_probs_matmul(torch::matmul(q * scale, k.transpose(-1, -2)), bias, v, p, true);
}

// The blocked path and the plain one agree on outputs and on the gradients of the projection they read q, k, v from
// ([B, L, 3 x heads x d], as BERT's) and of a learned bias (MPNet's, added to the padding's as score_bias adds it),
// with a padding bias, both or none, with and without dropout (the same masks: the same
// key over the whole scores), in fp32 and bf16, over several blocks (a shorter last one among them) and at an odd
// length, whose blocks must start on a byte of the mask's bits. Without a graph, and on one thread or three (blocks
// shared out among threads), the output is the same bit for bit.
TEST(AttentionProbs, TheBlockedPathGivesThePlainPathsOutputsAndGradients) {
  if (!softmax_dropout_vectorised()) GTEST_SKIP() << "no AVX-512: the blocked path needs the fused loops";
  const int64_t b = 7, heads = 4, d = 8;
  bool shorter_last_block = false;
  for (const bool bf16 : {false, true}) {
    const auto dtype = bf16 ? torch::kBFloat16 : torch::kFloat;
    for (const int64_t l : {int64_t{301}, int64_t{256}}) {
      const int64_t rows = blocked_attention_rows(b, heads, l, l, bf16 ? 2 : 4);
      ASSERT_LT(rows, b) << "several blocks";
      shorter_last_block = shorter_last_block || b % rows != 0;
      for (const double p : {0.0, 0.3}) {
        for (const int bias_kind : {0, 1, 2}) {  // padding, none, padding + learned
          SCOPED_TRACE(::testing::Message() << "bf16 " << bf16 << " L " << l << " p " << p << " bias " << bias_kind);
          torch::manual_seed(l);
          const torch::Tensor projection = torch::randn({b, l, 3 * heads * d}).to(dtype);
          const torch::Tensor padding = bias_kind != 1 ? padding_bias(b, l, l / 3, dtype) : torch::Tensor();
          const torch::Tensor learned_in = torch::randn({1, heads, l, l}).to(dtype);
          auto run = [&](bool blocked, bool graph, int threads) {
            const int before = at::get_num_threads();
            at::set_num_threads(threads);
            const torch::Tensor x = graph ? projection.clone().requires_grad_(true) : projection;
            const torch::Tensor learned = learned_in.clone().requires_grad_(graph);
            const torch::Tensor bias = bias_kind == 2 ? learned + padding : padding;
            const auto parts = x.chunk(3, -1);
            auto split = [&](const torch::Tensor& t) { return t.view({b, l, heads, d}).transpose(1, 2); };
            const torch::Tensor q = split(parts[0]), k = split(parts[1]), v = split(parts[2]);
            EXPECT_TRUE(blocked_attention_takes(q, k, v, bias));
            torch::manual_seed(5);
            const double scale = 1.0 / std::sqrt(static_cast<double>(d));
            const torch::Tensor out =
                blocked ? blocked_attention(q, k, v, bias, scale, p, true) : plain_attention(q, k, v, bias, scale, p);
            Outcome r;
            if (graph) {
              (out.to(torch::kFloat) * torch::linspace(-1, 1, out.numel()).view(out.sizes())).sum().backward();
              r.values = {out.detach().to(torch::kFloat), x.grad().to(torch::kFloat)};
              if (bias_kind == 2) r.values.push_back(learned.grad().to(torch::kFloat));
            } else {
              r.values = {out.to(torch::kFloat)};
            }
            r.next_draw = static_cast<int64_t>(keyed_dropout_key());
            at::set_num_threads(before);
            return r;
          };
          const Outcome blocked = run(true, true, 2), plain = run(false, true, 2);
          // The same products per batch row and the same loops (on the Xeon this was written on, equal bit for
          // bit); LibTorch's bmm may sum in another order for batches of another size.
          const double tol = bf16 ? 2e-2 : 1e-5;
          for (size_t i = 0; i < blocked.values.size(); ++i) {
            EXPECT_TRUE(torch::allclose(blocked.values[i], plain.values[i], tol, tol))
                << i << ": " << (blocked.values[i] - plain.values[i]).abs().max().item<double>();
            EXPECT_GT(blocked.values[i].abs().sum().item<double>(), 0) << i;
          }
          EXPECT_EQ(blocked.next_draw, plain.next_draw) << "one draw of the generator each";
          EXPECT_TRUE(torch::equal(run(true, false, 2).values[0], blocked.values[0])) << "without a graph";
          for (const int threads : {1, 3}) {
            const Outcome other = run(true, true, threads);
            EXPECT_TRUE(torch::equal(other.values[0], blocked.values[0])) << threads << " threads";
            EXPECT_TRUE(torch::equal(other.values[1], blocked.values[1])) << threads << " threads";
          }
        }
      }
    }
  }
  EXPECT_TRUE(shorter_last_block);
}

// Blocks start on a byte of the mask's bits, take about the same bytes whatever the length, and never more rows than
// the batch has.
TEST(AttentionProbs, BlocksStartOnAByteOfTheMask) {
  for (const int64_t heads : {int64_t{1}, int64_t{3}, int64_t{12}}) {
    for (const int64_t l : {int64_t{1}, int64_t{7}, int64_t{33}, int64_t{128}, int64_t{257}, int64_t{2048}}) {
      for (const int64_t batch : {int64_t{1}, int64_t{5}, int64_t{64}}) {
        const int64_t rows = blocked_attention_rows(batch, heads, l, l, 2);
        EXPECT_GE(rows, 1);
        EXPECT_LE(rows, batch);
        if (rows < batch) {
          EXPECT_EQ(rows * heads * l * l % 8, 0) << heads << " " << l << " " << batch;
        }
      }
    }
  }
  EXPECT_EQ(blocked_attention_rows(64, 12, 128, 128, 2), 2);   // 0.75 of the 1 MB of bf16 scores a block takes
  EXPECT_EQ(blocked_attention_rows(64, 12, 2048, 2048, 2), 1);  // one row past the budget: still one
}

}  // namespace
}  // namespace ragmig::model
