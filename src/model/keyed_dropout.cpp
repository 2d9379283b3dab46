// Counter-based dropout masks (see keyed_dropout.h).
#include "model/keyed_dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "core/error.h"
#include "core/splitmix.h"

namespace ragmig::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Calls f(first, count, m, kept) over [0, n) in blocks, m[j] the mask's value of element first + j: 0 or
// 1 / (1 - p), and kept[q] the four keep bits of elements first + 4q .. first + 4q + 3 (bit k: element 4q + k).
// Blocks run in parallel and start at multiples of 8 elements; the values come from the hashes in a tight
// branch-free loop, and f's loop over a block vectorises (one loop doing both ran at ~3 ns an element).
template <typename F>
void for_each_mask_block(int64_t n, double p, uint64_t key, const F& f) {
  RAGMIG_CHECK(p >= 0 && p < 1, "dropout probability in [0, 1)");
  // Element i keeps when its 16-bit uniform u (four per hash of (key, i / 4)) is >= drop, so P(drop) =
  // drop / 65536, p rounded to the nearest 1/65536.
  const auto drop = static_cast<uint32_t>(std::lround(p * 65536.0));
  const auto scale = static_cast<float>(1.0 / (1.0 - p));
  constexpr int64_t kGrain = 1 << 15;  // elements per task, a multiple of 4
  constexpr int64_t kBlock = 1024;     // hashes per block: 16 KB of values
  at::parallel_for(0, (n + 3) / 4, kGrain / 4, [&](int64_t begin, int64_t end) {
    float m[4 * kBlock];
    uint8_t kept[kBlock];
    for (int64_t h0 = begin; h0 < end; h0 += kBlock) {
      const int64_t h1 = std::min(end, h0 + kBlock);
      for (int64_t h = h0; h < h1; ++h) {
        const uint64_t r = splitmix64(key ^ splitmix64(static_cast<uint64_t>(h)));
        float* v = m + 4 * (h - h0);
        uint8_t bits = 0;
        for (int k = 0; k < 4; ++k) {
          const bool keep = ((r >> (16 * k)) & 0xFFFFu) >= drop;
          v[k] = static_cast<float>(keep) * scale;
          bits |= static_cast<uint8_t>(keep) << k;
        }
        kept[h - h0] = bits;
      }
      f(4 * h0, std::min(4 * h1, n) - 4 * h0, m, kept);
    }
  });
}

// out[i] = in[i] * mask[i], the mask's value in the tensors' dtype (as x * mask.to(dtype) computes it); with
// `bits`, also bit i % 8 of bits[i / 8] = whether element i was kept. Tasks and blocks start at multiples of 8.
void multiply_by_mask(const torch::Tensor& in, torch::Tensor& out, double p, uint64_t key, uint8_t* bits) {
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "keyed_dropout", [&] {
    const scalar_t* x = in.data_ptr<scalar_t>();
    scalar_t* y = out.data_ptr<scalar_t>();
    for_each_mask_block(in.numel(), p, key, [&](int64_t first, int64_t count, const float* m, const uint8_t* kept) {
      for (int64_t j = 0; j < count; ++j) y[first + j] = x[first + j] * static_cast<scalar_t>(m[j]);
      if (!bits) return;
      const int64_t hashes = (count + 3) / 4;
      for (int64_t q = 0; q < hashes; q += 2)
        bits[(first + 4 * q) / 8] = kept[q] | (q + 1 < hashes ? kept[q + 1] << 4 : 0);
    });
  });
}

// out[i] = in[i] * (the mask's value kept in bits), the same product as multiply_by_mask's, without hashing.
void multiply_by_bits(const torch::Tensor& in, torch::Tensor& out, const torch::Tensor& bits, double p) {
  const int64_t n = in.numel();
  RAGMIG_CHECK(bits.scalar_type() == torch::kUInt8 && bits.numel() == (n + 7) / 8, "dropout bits of this tensor");
  const uint8_t* b = bits.data_ptr<uint8_t>();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "keyed_dropout_bits", [&] {
    const scalar_t* x = in.data_ptr<scalar_t>();
    scalar_t* y = out.data_ptr<scalar_t>();
    const auto scale = static_cast<scalar_t>(static_cast<float>(1.0 / (1.0 - p)));  // the mask's, as it rounds
    const scalar_t values[2] = {static_cast<scalar_t>(0.0f), scale};
    at::parallel_for(0, (n + 7) / 8, 1 << 12, [&](int64_t begin, int64_t end) {
      for (int64_t byte = begin; byte < end; ++byte)
        for (int64_t k = 0, i = 8 * byte; k < 8 && i < n; ++k, ++i) y[i] = x[i] * values[(b[byte] >> k) & 1];
    });
  });
}

// x * mask, keeping the mask as bits: backward multiplies the gradient by the same mask.
struct KeyedDropoutFunction : public torch::autograd::Function<KeyedDropoutFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double p, int64_t key) {
    return keyed_dropout_saving_bits(ctx, x, p, static_cast<uint64_t>(key));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {keyed_dropout_saved(ctx, grads[0]), torch::Tensor(), torch::Tensor()};
  }
};

// (probs * mask) . v, keeping probs, v and the mask's bits. Under autocast the product runs in the autocast dtype
// (its output's, so its gradient's), and backward computes the two products in that dtype, as autograd's matmul
// on autocast's copies would.
struct KeyedDropoutMatmulFunction : public torch::autograd::Function<KeyedDropoutMatmulFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& probs, const torch::Tensor& v, double p,
                               int64_t key) {
    ctx->save_for_backward({probs, v});
    return torch::matmul(keyed_dropout_saving_bits(ctx, probs, p, static_cast<uint64_t>(key)), v);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &probs = saved[0], &v = saved[1];
    const torch::Tensor& g = grads[0];
    torch::Tensor grad_probs, grad_v;
    if (ctx->needs_input_grad(0)) {
      grad_probs = torch::matmul(g, v.to(g.scalar_type()).transpose(-1, -2)).to(probs.scalar_type()).contiguous();
      keyed_dropout_saved_(ctx, grad_probs);
    }
    if (ctx->needs_input_grad(1))
      grad_v = torch::matmul(keyed_dropout_saved(ctx, probs).to(g.scalar_type()).transpose(-1, -2), g)
                   .to(v.scalar_type());
    return {grad_probs, grad_v, torch::Tensor(), torch::Tensor()};
  }
};

// Whether a CPU dropout builds a graph node (else the product alone is enough).
bool carries_gradient(const torch::Tensor& x) { return torch::GradMode::is_enabled() && x.requires_grad(); }

}  // namespace

uint64_t keyed_dropout_key() {
  // Under the generator's lock, as LibTorch's own kernels take it.
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get<at::CPUGeneratorImpl>()->random64();
}

torch::Tensor keyed_dropout_mask(int64_t n, double p, uint64_t key, torch::ScalarType dtype) {
  torch::Tensor mask = torch::empty({n}, torch::kFloat);
  float* out = mask.data_ptr<float>();
  for_each_mask_block(n, p, key, [&](int64_t first, int64_t count, const float* m, const uint8_t*) {
    std::copy(m, m + count, out + first);
  });
  return dtype == torch::kFloat ? mask : mask.to(dtype);
}

torch::Tensor keyed_dropout_apply(const torch::Tensor& x, double p, uint64_t key) {
  const torch::Tensor in = x.contiguous();
  torch::Tensor out = torch::empty_like(in);
  multiply_by_mask(in, out, p, key, nullptr);
  return out;
}

std::pair<torch::Tensor, torch::Tensor> keyed_dropout_apply_keeping_bits(const torch::Tensor& x, double p,
                                                                         uint64_t key) {
  const torch::Tensor in = x.contiguous();
  torch::Tensor out = torch::empty_like(in);
  torch::Tensor bits = torch::empty({(in.numel() + 7) / 8}, torch::kUInt8);
  multiply_by_mask(in, out, p, key, bits.data_ptr<uint8_t>());
  return {out, bits};
}

torch::Tensor keyed_dropout_apply_bits(const torch::Tensor& x, const torch::Tensor& bits, double p) {
  const torch::Tensor in = x.contiguous();
  torch::Tensor out = torch::empty_like(in);
  multiply_by_bits(in, out, bits, p);
  return out;
}

void keyed_dropout_apply_bits_(torch::Tensor& x, const torch::Tensor& bits, double p) {
  RAGMIG_CHECK(x.is_contiguous(), "keyed_dropout_apply_bits_ needs a contiguous tensor");
  multiply_by_bits(x, x, bits, p);
}

torch::Tensor keyed_dropout_saving_bits(AutogradContext* ctx, const torch::Tensor& x, double p, uint64_t key) {
  auto [dropped, bits] = keyed_dropout_apply_keeping_bits(x, p, key);
  ctx->saved_data["dropout_p"] = p;
  ctx->saved_data["dropout_bits"] = bits;
  return dropped;
}

torch::Tensor keyed_dropout_saved(AutogradContext* ctx, const torch::Tensor& x) {
  return keyed_dropout_apply_bits(x, ctx->saved_data["dropout_bits"].toTensor(),
                                  ctx->saved_data["dropout_p"].toDouble());
}

void keyed_dropout_saved_(AutogradContext* ctx, torch::Tensor& x) {
  keyed_dropout_apply_bits_(x, ctx->saved_data["dropout_bits"].toTensor(), ctx->saved_data["dropout_p"].toDouble());
}

torch::Tensor keyed_dropout_mask_like(const torch::Tensor& x, double p, uint64_t key) {
  return keyed_dropout_mask(x.numel(), p, key, x.scalar_type()).view(x.sizes());
}

torch::Tensor keyed_dropout(const torch::Tensor& x, double p, bool training) {
  if (!training || p == 0) return x;
  if (!x.device().is_cpu()) return torch::dropout(x, p, training);
  const uint64_t key = keyed_dropout_key();
  if (carries_gradient(x)) return KeyedDropoutFunction::apply(x, p, static_cast<int64_t>(key));
  return keyed_dropout_apply(x, p, key);
}

torch::Tensor keyed_dropout_matmul(const torch::Tensor& probs, const torch::Tensor& v, double p, bool training) {
  if (!training || p == 0 || !probs.device().is_cpu() || !(carries_gradient(probs) || carries_gradient(v)))
    return torch::matmul(keyed_dropout(probs, p, training), v);
  return KeyedDropoutMatmulFunction::apply(probs, v, p, static_cast<int64_t>(keyed_dropout_key()));
}

}  // namespace ragmig::model
