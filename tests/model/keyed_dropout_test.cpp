// model/keyed_dropout.h: masks drop at the asked rate and scale the rest, follow the default generator's state
// (so GradCache's replay and checkpoints reproduce them), do not depend on the thread count, and carry the
// gradient like torch::dropout, also through the graph nodes that keep keys instead of masks.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "core/splitmix.h"
#include "model/keyed_dropout.h"
#include "model/keyed_dropout_kernels.h"
#include "train/autocast_guard.h"

namespace ragmig::model {
namespace {

TEST(KeyedDropout, DropsAtTheAskedRateAndScalesTheRest) {
  for (const double p : {0.1, 0.3, 0.5}) {
    const int64_t n = 1 << 20;
    const torch::Tensor mask = keyed_dropout_mask(n, p, 42, torch::kFloat);
    const double dropped = (mask == 0).sum().item<double>() / static_cast<double>(n);
    EXPECT_NEAR(dropped, p, 4 * std::sqrt(p * (1 - p) / static_cast<double>(n))) << p;  // 4 sigma
    const torch::Tensor kept = mask.masked_select(mask != 0);
    EXPECT_TRUE(torch::allclose(kept, torch::full_like(kept, 1.0 / (1.0 - p)))) << p;
    EXPECT_NEAR(mask.mean().item<double>(), 1.0, 0.01) << p;  // expectation kept
    // Neighbours are not correlated (four draws share one hash): P(both dropped) ~ p^2.
    const torch::Tensor d = (mask == 0).to(torch::kFloat);
    const double both = (d.slice(0, 0, n - 1) * d.slice(0, 1, n)).mean().item<double>();
    EXPECT_NEAR(both, p * p, 0.01) << p;
  }
  EXPECT_EQ((keyed_dropout_mask(1000, 0.0, 7, torch::kFloat) == 1).sum().item<int64_t>(), 1000);
}

TEST(KeyedDropout, MasksArePureFunctionsOfTheKeyWhateverTheThreads) {
  const int threads = at::get_num_threads();
  const torch::Tensor a = keyed_dropout_mask(100003, 0.1, 9, torch::kFloat);
  at::set_num_threads(1);
  const torch::Tensor b = keyed_dropout_mask(100003, 0.1, 9, torch::kFloat);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(a, keyed_dropout_mask(100003, 0.1, 10, torch::kFloat)));
  // A shorter mask is the longer one's beginning (element i depends on i alone), in any dtype.
  EXPECT_TRUE(torch::equal(keyed_dropout_mask(7, 0.1, 9, torch::kFloat), a.slice(0, 0, 7)));
  EXPECT_TRUE(torch::equal(keyed_dropout_mask(7, 0.1, 9, torch::kBFloat16), a.slice(0, 0, 7).to(torch::kBFloat16)));
}

TEST(KeyedDropout, FollowsTheGeneratorAndCarriesTheGradient) {
  const torch::Tensor x = torch::randn({4, 8, 16}).requires_grad_(true);
  torch::manual_seed(5);
  const torch::Tensor y1 = keyed_dropout(x, 0.25, true);
  const torch::Tensor y2 = keyed_dropout(x, 0.25, true);
  torch::manual_seed(5);
  const torch::Tensor again = keyed_dropout(x, 0.25, true);
  EXPECT_TRUE(torch::equal(y1, again));      // the same generator state, the same mask (GradCache replays it)
  EXPECT_FALSE(torch::equal(y1, y2));        // each call draws anew
  EXPECT_EQ(y1.sizes(), x.sizes());
  // d y / d x is the mask itself: zero where dropped, 1 / (1 - p) where kept.
  y1.sum().backward();
  const torch::Tensor mask = y1.detach() / x.detach();
  EXPECT_TRUE(torch::allclose(x.grad(), mask, 1e-5, 1e-5));
  EXPECT_TRUE(torch::equal(keyed_dropout(x, 0.25, false), x));  // evaluation: untouched
  EXPECT_TRUE(torch::equal(keyed_dropout(x, 0.0, true), x));
}

// keyed_dropout is x times the mask of one key drawn from the default generator: keyed_dropout_key() after the
// same seed, with keyed_dropout_mask_like, gives the same product (what model/lora_linear.cpp's backward remakes).
TEST(KeyedDropout, TheKeyAndTheMaskMakeTheSameProduct) {
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    const torch::Tensor x = torch::randn({3, 5, 7}).to(dtype);
    torch::manual_seed(11);
    const torch::Tensor dropped = keyed_dropout(x, 0.3, true);
    const torch::Tensor next = keyed_dropout(x, 0.3, true);
    torch::manual_seed(11);
    EXPECT_TRUE(torch::equal(dropped, x * keyed_dropout_mask_like(x, 0.3, keyed_dropout_key()))) << dtype;
    EXPECT_TRUE(torch::equal(next, x * keyed_dropout_mask_like(x, 0.3, keyed_dropout_key()))) << dtype;
    EXPECT_FALSE(torch::equal(dropped, next));
  }
}

// keyed_dropout_apply multiplies by the mask without making it: the product of the mask, bit for bit, in each
// floating dtype, for a strided input too; so does the mask kept as bits, in place too.
TEST(KeyedDropout, ApplyingTheKeyIsMultiplyingByItsMask) {
  for (const auto dtype : {torch::kFloat, torch::kBFloat16, torch::kHalf, torch::kDouble}) {
    const torch::Tensor x = torch::randn({6, 70001}).to(dtype);  // odd: the last hash's four draws are cut short
    EXPECT_TRUE(torch::equal(keyed_dropout_apply(x, 0.2, 5), x * keyed_dropout_mask_like(x, 0.2, 5))) << dtype;
    const torch::Tensor strided = x.t();
    EXPECT_TRUE(torch::equal(keyed_dropout_apply(strided, 0.2, 5), strided * keyed_dropout_mask_like(strided, 0.2, 5)))
        << dtype;
    // The mask kept as bits gives the same product again, to this tensor or another of its size.
    const torch::Tensor product = x * keyed_dropout_mask_like(x, 0.2, 5);
    const auto [dropped, bits] = keyed_dropout_apply_keeping_bits(x, 0.2, 5);
    EXPECT_TRUE(torch::equal(dropped, product)) << dtype;
    EXPECT_EQ(bits.numel(), (x.numel() + 7) / 8);
    EXPECT_TRUE(torch::equal(keyed_dropout_apply_bits(x, bits, 0.2), product)) << dtype;
    const torch::Tensor g = torch::randn({6, 70001}).to(dtype);
    torch::Tensor g_in_place = g.clone();
    keyed_dropout_apply_bits_(g_in_place, bits, 0.2);
    EXPECT_TRUE(torch::equal(g_in_place, g * keyed_dropout_mask_like(g, 0.2, 5))) << dtype;
  }
  EXPECT_THROW(keyed_dropout_apply_bits(torch::ones({9}), torch::zeros({1}, torch::kUInt8), 0.2), std::exception);
}

// Runs `body` once on each vectorised path this CPU has: AVX-512, then AVX2 with the wider one capped.
void on_each_vector_path(const std::function<void()>& body) {
  for (const MaskIsa isa : mask_isas()) {
    if (isa == MaskIsa::Scalar) continue;
    cap_mask_isa(isa);
    SCOPED_TRACE(to_string(isa));
    body();
  }
  cap_mask_isa(MaskIsa::Avx512);
}

// The vectorised products (AVX-512 and AVX2, where this CPU has them) equal the scalar one byte for byte: every bf16
// bit pattern (NaNs, infinities, subnormals, both zeros) against kept and dropped bits, fp32 edge values and random
// ones, tails that are not a whole byte of bits nor an even number of bytes, and in place.
TEST(KeyedDropout, TheVectorisedMaskProductEqualsTheScalarOneOnEveryValue) {
  RecordProperty("vectorised", to_string(mask_isa()));
  auto check = [](const auto* x, int64_t n, auto scale) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(x)>>;
    std::vector<uint8_t> bits((n + 7) / 8);
    for (size_t b = 0; b < bits.size(); ++b) bits[b] = static_cast<uint8_t>(splitmix64(b));
    std::vector<T> fast(n), slow(n), in_place(x, x + n);
    multiply_by_mask_bits(x, fast.data(), bits.data(), n, scale);
    multiply_by_mask_bits_scalar(x, slow.data(), bits.data(), n, scale);
    multiply_by_mask_bits(in_place.data(), in_place.data(), bits.data(), n, scale);
    EXPECT_EQ(std::memcmp(fast.data(), slow.data(), n * sizeof(T)), 0);
    EXPECT_EQ(std::memcmp(in_place.data(), slow.data(), n * sizeof(T)), 0);
  };
  std::vector<uint16_t> patterns(2 * 65536 + 13);  // every pattern twice, under other bits; a tail of 13
  for (size_t i = 0; i < patterns.size(); ++i) patterns[i] = static_cast<uint16_t>(i * 40503u);
  std::vector<float> floats = {std::nanf("1"), -std::nanf("7"), INFINITY, -INFINITY, 0.0f, -0.0f, 1e-45f, -1e-40f,
                               FLT_MAX, -FLT_MAX, FLT_MIN, 1.0f, -3.5f};
  for (int i = 0; i < 100003; ++i) floats.push_back(static_cast<float>(splitmix64(i) % 2000001) / 1000.0f - 1000.0f);
  on_each_vector_path([&] {
    for (const float scale : {1.0f / 0.9f, 1.0f / 0.7f, 2.0f})
      for (const int64_t n : {static_cast<int64_t>(patterns.size()), int64_t{24}, int64_t{15}})
        check(reinterpret_cast<const c10::BFloat16*>(patterns.data()), n, c10::BFloat16(scale));
    check(floats.data(), static_cast<int64_t>(floats.size()), 1.0f / 0.9f);
    check(floats.data(), int64_t{23}, 1.0f / 0.9f);
  });
}

// The vectorised, threaded mask bits equal the scalar ones: at rates down to the finest (drop = 65535 of 65536)
// and the one past it (every element dropped), for lengths that end mid-byte, and over ranges that start where
// LibTorch's threads split them.
TEST(KeyedDropout, TheVectorisedMaskBitsEqualTheScalarOnes) {
  on_each_vector_path([] {
    for (const double p : {0.0, 0.1, 0.5, 65535.0 / 65536.0, 1.0 - 0.4 / 65536.0}) {
      for (const int64_t n : {int64_t{1}, int64_t{61}, int64_t{1000003}}) {
        std::vector<uint8_t> fast((n + 7) / 8), slow((n + 7) / 8);
        fill_keep_bits(n, p, 0xC0FFEE + n, fast.data());
        fill_keep_bits_scalar(n, p, 0xC0FFEE + n, slow.data());
        EXPECT_EQ(fast, slow) << p << " " << n;
      }
    }
  });
  std::vector<uint8_t> none(125);
  fill_keep_bits(1000, 1.0 - 0.4 / 65536.0, 3, none.data());
  EXPECT_EQ(std::count(none.begin(), none.end(), 0), 125);  // rounded to 65536 / 65536: all dropped
}

// The graph nodes that keep the mask's bits (keyed_dropout with a gradient, keyed_dropout_matmul) give the outputs of
// autograd's own product and matmul over the same mask bit for bit, their gradients too (in fp32; close under
// CPU bf16 autocast), and draw the generator once per call.
TEST(KeyedDropout, TheNodesThatKeepBitsGiveAutogradsGradients) {
  for (const bool bf16 : {false, true}) {
    torch::manual_seed(2);
    const torch::Tensor logits = torch::randn({2, 3, 9, 9}).requires_grad_(true);
    const torch::Tensor v = torch::randn({2, 3, 9, 4}).requires_grad_(true);
    const torch::Tensor h = torch::randn({2, 9, 12}).requires_grad_(true);
    const torch::Tensor w_out = torch::randn({2, 3, 9, 4}), w_h = torch::randn({2, 9, 12});
    auto run = [&](const std::function<std::vector<torch::Tensor>()>& forward) {
      for (const torch::Tensor& t : {logits, v, h}) t.mutable_grad().reset();
      torch::manual_seed(9);
      std::vector<torch::Tensor> out;
      {
        train::AutocastGuard autocast(torch::kCPU, bf16);
        out = forward();
      }
      ((out[0].to(torch::kFloat) * w_out).sum() + (out[1].to(torch::kFloat) * w_h).sum()).backward();
      return std::vector<torch::Tensor>{out[0].detach(), out[1].detach(), logits.grad(), v.grad(), h.grad(),
                                        torch::tensor(static_cast<int64_t>(keyed_dropout_key()))};
    };
    const auto ours = run([&] {
      return std::vector<torch::Tensor>{keyed_dropout_matmul(torch::softmax(logits, -1), v, 0.3, true),
                                        keyed_dropout(h, 0.2, true)};
    });
    const auto plain = run([&] {
      const torch::Tensor probs = torch::softmax(logits, -1);
      const torch::Tensor context = torch::matmul(probs * keyed_dropout_mask_like(probs, 0.3, keyed_dropout_key()), v);
      return std::vector<torch::Tensor>{context, h * keyed_dropout_mask_like(h, 0.2, keyed_dropout_key())};
    });
    EXPECT_TRUE(torch::equal(ours[0], plain[0])) << bf16;
    EXPECT_TRUE(torch::equal(ours[1], plain[1])) << bf16;
    EXPECT_EQ(ours[0].scalar_type(), bf16 ? torch::kBFloat16 : torch::kFloat);
    for (size_t i = 2; i < 5; ++i) {
      if (bf16)
        EXPECT_TRUE(torch::allclose(ours[i], plain[i], 2e-2, 2e-2)) << i;
      else
        EXPECT_TRUE(torch::equal(ours[i], plain[i])) << i;
      EXPECT_EQ(ours[i].scalar_type(), torch::kFloat) << i;
    }
    for (size_t i = 2; i < 5; ++i) EXPECT_GT(ours[i].abs().sum().item<double>(), 0) << i;
    EXPECT_EQ(ours[5].item<int64_t>(), plain[5].item<int64_t>()) << "one draw of the generator per call";
  }
}

// Without a gradient to carry (GradCache's first pass, no_grad), the same masks from the same draws.
TEST(KeyedDropout, WithoutAGradientTheSameMasks) {
  const torch::Tensor probs = torch::softmax(torch::randn({2, 2, 5, 5}), -1), v = torch::randn({2, 2, 5, 3});
  torch::manual_seed(4);
  const torch::Tensor plain = keyed_dropout_matmul(probs, v, 0.4, true);
  torch::manual_seed(4);
  const torch::Tensor with_graph = keyed_dropout_matmul(probs, v.clone().requires_grad_(true), 0.4, true);
  EXPECT_TRUE(torch::equal(plain, with_graph.detach()));
  EXPECT_TRUE(torch::equal(keyed_dropout_matmul(probs, v, 0.4, false), torch::matmul(probs, v)));
}

}  // namespace
}  // namespace ragmig::model
