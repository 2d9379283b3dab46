// Counter-based dropout masks (see keyed_dropout.h).
#include "model/keyed_dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <mutex>

#include "core/error.h"
#include "core/splitmix.h"

namespace ragmig::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

uint64_t key_of(AutogradContext* ctx) { return static_cast<uint64_t>(ctx->saved_data["key"].toInt()); }

// x * mask, keeping the key: backward multiplies the gradient by the same mask, made again.
struct KeyedDropoutFunction : public torch::autograd::Function<KeyedDropoutFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double p, int64_t key) {
    ctx->saved_data["p"] = p;
    ctx->saved_data["key"] = key;
    return x * keyed_dropout_mask_like(x, p, static_cast<uint64_t>(key));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const torch::Tensor& g = grads[0];
    return {g * keyed_dropout_mask_like(g, ctx->saved_data["p"].toDouble(), key_of(ctx)), torch::Tensor(),
            torch::Tensor()};
  }
};

// (probs * mask) . v, keeping probs, v and the key. Under autocast the product runs in the autocast dtype (its
// output's, so its gradient's), and backward computes the two products in that dtype, as autograd's matmul on
// autocast's copies would.
struct KeyedDropoutMatmulFunction : public torch::autograd::Function<KeyedDropoutMatmulFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& probs, const torch::Tensor& v, double p,
                               int64_t key) {
    ctx->save_for_backward({probs, v});
    ctx->saved_data["p"] = p;
    ctx->saved_data["key"] = key;
    return torch::matmul(probs * keyed_dropout_mask_like(probs, p, static_cast<uint64_t>(key)), v);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &probs = saved[0], &v = saved[1];
    const torch::Tensor mask = keyed_dropout_mask_like(probs, ctx->saved_data["p"].toDouble(), key_of(ctx));
    const torch::Tensor& g = grads[0];
    torch::Tensor grad_probs, grad_v;
    if (ctx->needs_input_grad(0))
      grad_probs = torch::matmul(g, v.to(g.scalar_type()).transpose(-1, -2)).to(probs.scalar_type()) * mask;
    if (ctx->needs_input_grad(1))
      grad_v = torch::matmul((probs * mask).to(g.scalar_type()).transpose(-1, -2), g).to(v.scalar_type());
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
  RAGMIG_CHECK(p >= 0 && p < 1, "dropout probability in [0, 1)");
  // Element i keeps when its 16-bit uniform u (four per hash of (key, i / 4)) is >= drop, so P(drop) =
  // drop / 65536, p rounded to the nearest 1/65536.
  const auto drop = static_cast<uint32_t>(std::lround(p * 65536.0));
  torch::Tensor mask = torch::empty({n}, torch::kFloat);
  float* out = mask.data_ptr<float>();
  const auto scale = static_cast<float>(1.0 / (1.0 - p));
  constexpr int64_t kGrain = 1 << 15;  // a multiple of 4: each hash's four draws stay in one chunk
  at::parallel_for(0, (n + 3) / 4, kGrain / 4, [&](int64_t begin, int64_t end) {
    for (int64_t h = begin; h < end; ++h) {
      const uint64_t r = splitmix64(key ^ splitmix64(static_cast<uint64_t>(h)));
      const int64_t first = h * 4, last = std::min<int64_t>(first + 4, n);
      for (int64_t i = first; i < last; ++i) {
        const auto u = static_cast<uint32_t>((r >> (16 * (i - first))) & 0xFFFFu);
        out[i] = u >= drop ? scale : 0.0f;
      }
    }
  });
  return dtype == torch::kFloat ? mask : mask.to(dtype);
}

torch::Tensor keyed_dropout_mask_like(const torch::Tensor& x, double p, uint64_t key) {
  return keyed_dropout_mask(x.numel(), p, key, x.scalar_type()).view(x.sizes());
}

torch::Tensor keyed_dropout(const torch::Tensor& x, double p, bool training) {
  if (!training || p == 0) return x;
  if (!x.device().is_cpu()) return torch::dropout(x, p, training);
  const uint64_t key = keyed_dropout_key();
  if (carries_gradient(x)) return KeyedDropoutFunction::apply(x, p, static_cast<int64_t>(key));
  return x * keyed_dropout_mask_like(x, p, key);
}

torch::Tensor keyed_dropout_matmul(const torch::Tensor& probs, const torch::Tensor& v, double p, bool training) {
  if (!training || p == 0 || !probs.device().is_cpu() || !(carries_gradient(probs) || carries_gradient(v)))
    return torch::matmul(keyed_dropout(probs, p, training), v);
  return KeyedDropoutMatmulFunction::apply(probs, v, p, static_cast<int64_t>(keyed_dropout_key()));
}

}  // namespace ragmig::model
