// Counter-based dropout masks (see keyed_dropout.h).
#include "model/keyed_dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>

#include <mutex>

#include "core/error.h"
#include "model/keyed_dropout_kernels.h"

namespace ragmig::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// out[i] = in[i] * the mask's value kept in bits (model/keyed_dropout_kernels.h); out may be in.
void multiply_by_bits(const torch::Tensor& in, torch::Tensor& out, const uint8_t* bits, double p) {
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "keyed_dropout", [&] {
    multiply_by_mask_bits(in.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), bits, in.numel(),
                          keep_scale<scalar_t>(p));
  });
}

// The bits of x's mask, checked against x.
const uint8_t* bits_of(const torch::Tensor& x, const torch::Tensor& bits) {
  RAGMIG_CHECK(bits.scalar_type() == torch::kUInt8 && bits.is_contiguous() && bits.numel() == (x.numel() + 7) / 8,
               "dropout bits of this tensor");
  return bits.data_ptr<uint8_t>();
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
  torch::Tensor bits = torch::empty({(n + 7) / 8}, torch::kUInt8);
  fill_keep_bits(n, p, key, bits.data_ptr<uint8_t>());
  torch::Tensor mask = torch::ones({n}, dtype);
  multiply_by_bits(mask, mask, bits.data_ptr<uint8_t>(), p);
  return mask;
}

torch::Tensor keyed_dropout_apply(const torch::Tensor& x, double p, uint64_t key) {
  return keyed_dropout_apply_keeping_bits(x, p, key).first;
}

std::pair<torch::Tensor, torch::Tensor> keyed_dropout_apply_keeping_bits(const torch::Tensor& x, double p,
                                                                         uint64_t key) {
  const torch::Tensor in = x.contiguous();
  torch::Tensor out = torch::empty_like(in);
  torch::Tensor bits = torch::empty({(in.numel() + 7) / 8}, torch::kUInt8);
  fill_keep_bits(in.numel(), p, key, bits.data_ptr<uint8_t>());
  multiply_by_bits(in, out, bits.data_ptr<uint8_t>(), p);
  return {out, bits};
}

torch::Tensor keyed_dropout_apply_bits(const torch::Tensor& x, const torch::Tensor& bits, double p) {
  const torch::Tensor in = x.contiguous();
  torch::Tensor out = torch::empty_like(in);
  multiply_by_bits(in, out, bits_of(in, bits), p);
  return out;
}

void keyed_dropout_apply_bits_(torch::Tensor& x, const torch::Tensor& bits, double p) {
  RAGMIG_CHECK(x.is_contiguous(), "keyed_dropout_apply_bits_ needs a contiguous tensor");
  multiply_by_bits(x, x, bits_of(x, bits), p);
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
