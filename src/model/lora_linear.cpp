#include "model/lora_linear.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "model/cpu_parallel.h"
#include "model/keyed_dropout.h"

namespace ragmig::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The adapter's down-projection of dropout(x), (x * mask) A^T, as one graph node that keeps x and the mask's bits
// (model/keyed_dropout.h) and makes the dropped input again in backward. Autograd would keep each adapted
// layer's dropped copy of its input from forward to backward (as PEFT's layers do); here q, k and v keep the
// one input they share, as they do without dropout. Under autocast the product runs in the autocast dtype (its
// output's, so its gradient's) and backward computes in the same dtype.
struct DroppedDownFunction : public torch::autograd::Function<DroppedDownFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& a, double p,
                               int64_t key) {
    ctx->save_for_backward({x, a});
    return torch::linear(keyed_dropout_saving_bits(ctx, x, p, static_cast<uint64_t>(key)), a);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &a = saved[1];
    const auto dtype = grads[0].scalar_type();
    const torch::Tensor grad = grads[0].reshape({-1, a.size(0)});
    torch::Tensor grad_x, grad_a;
    if (ctx->needs_input_grad(0)) {
      grad_x = grad.mm(a.to(dtype)).to(x.scalar_type()).view(x.sizes()).contiguous();
      keyed_dropout_saved_(ctx, grad_x);
    }
    if (ctx->needs_input_grad(1))
      grad_a = grad.t()
                   .mm(keyed_dropout_saved(ctx, x).to(dtype).reshape({-1, a.size(1)}))
                   .to(a.scalar_type());
    return {grad_x, grad_a, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

LoraLinearImpl::LoraLinearImpl(int64_t in_features, int64_t out_features, bool with_bias) {
  weight = register_parameter("weight", torch::empty({out_features, in_features}));
  if (with_bias) bias = register_parameter("bias", torch::empty({out_features}));
  // nn.Linear's reset_parameters: Kaiming-uniform weight, bias uniform in +-1/sqrt(fan_in).
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  if (bias.defined()) bias.uniform_(-bound, bound);
}

torch::Tensor LoraLinearImpl::forward(const torch::Tensor& x) {
  // aten::linear folds the batch into one addmm, as Python's nn.Linear does (torch::nn::Linear's forward runs
  // a matmul and a separate bias add: 1.6x the mm time of a training step, bench/train --profile).
  return adapt(x, torch::linear(x, product_weight(x), bias));
}

bool LoraLinearImpl::merges_routes(const torch::Tensor& x) const {
  if (routes_.size() != 1 || routes_[0].begin != 0 || routes_[0].end != x.size(0)) return false;
  const int64_t rows = x.numel() / x.size(-1);
  return rows >= std::max(weight.size(0), weight.size(1));
}

torch::Tensor LoraLinearImpl::product_weight(const torch::Tensor& x) const {
  if (!merges_routes(x)) return weight;
  const LoraRoute& r = routes_[0];
  const auto dtype = weight.scalar_type();
  // One addmm: s B A is added to W in the product's accumulator and rounded to W's dtype once, as merge_adapter's
  // float32 sum is (without its float32 copies of W, which a merge per pass would pay for every pass).
  return torch::addmm(weight, r.b.to(dtype), r.a.to(dtype), 1.0, r.scaling);
}

torch::Tensor LoraLinearImpl::adapt(const torch::Tensor& x, torch::Tensor y) {
  if (!lora_A.is_empty()) {
    const bool keyed = dropout_ > 0 && is_training() && x.device().is_cpu();
    const auto down = (keyed ? DroppedDownFunction::apply(x, lora_A->weight, dropout_,
                                                          static_cast<int64_t>(keyed_dropout_key()))
                             : torch::linear(model::keyed_dropout(x, dropout_, is_training()), lora_A->weight))
                          .reshape({-1, lora_A->weight.size(0)});
    // y + s (down) B^T as one addmm (alpha = s): one new tensor of y's size where the product, its scaled copy
    // and the sum made three.
    const std::vector<int64_t> shape = y.sizes().vec();
    y = torch::addmm(y.reshape({-1, shape.back()}), down, lora_B->weight.t(), 1.0, scaling_).view(shape);
  }
  if (routes_.empty() || merges_routes(x)) return y;
  // y may be a view into the fused q, k, v product (BertSelfAttention::project): added to in place there, its rows
  // as one matrix; any other layout is copied to its own first.
  const bool one_matrix =
      y.stride(-1) == 1 && (y.dim() == 2 || (y.dim() == 3 && y.stride(0) == y.size(1) * y.stride(1)));
  if (!one_matrix) y = y.contiguous();
  // Each route's products are small (its rows times rank-r factors). On a CPU the routes, cut into pieces of rows
  // (a few per thread, so that one adapter for most of the batch is shared too), are shared out among the threads
  // in one parallel region, each thread's with single-threaded ops, where each op on all threads would wake them
  // for every route of every layer; a piece's rows stay in its core's cache from one product to the next. On a GPU
  // the ops only queue kernels: the routes whole, on the calling thread (its device and stream). In place on y's
  // rows, each piece its own: the routes exist only for inference, where no graph needs y unchanged.
  const bool cpu = y.device().is_cpu();
  int64_t rows = 0;
  for (const auto& r : routes_) rows += r.end - r.begin;
  const int64_t piece_rows = std::max<int64_t>(1, cpu ? rows / (4 * at::get_num_threads()) : rows);
  // Each piece with its route's factors in y's dtype, cast once per route: as autocast (the caller's, not the
  // worker threads') would have computed them.
  const auto dtype = y.scalar_type();
  struct Piece {
    torch::Tensor a, b;
    double scaling;
    int64_t begin, end;
  };
  std::vector<Piece> pieces;
  for (const auto& r : routes_) {
    const torch::Tensor a = r.a.to(dtype), b = r.b.to(dtype).t();
    for (int64_t first = r.begin; first < r.end; first += piece_rows)
      pieces.push_back({a, b, r.scaling, first, std::min(r.end, first + piece_rows)});
  }
  const bool inference = c10::InferenceMode::is_enabled();
  const auto run = [&](int64_t first, int64_t last) {
    const c10::InferenceMode mode(inference);
    const torch::NoGradGuard no_grad;
    for (int64_t i = first; i < last; ++i) {
      const Piece& p = pieces[static_cast<size_t>(i)];
      const torch::Tensor down = torch::linear(x.narrow(0, p.begin, p.end - p.begin).to(dtype), p.a);
      // y's rows += s (down) B^T, one addmm into them: no product of y's size to add afterwards.
      y.narrow(0, p.begin, p.end - p.begin)
          .view({-1, y.size(-1)})
          .addmm_(down.reshape({-1, down.size(-1)}), p.b, 1.0, p.scaling);
    }
  };
  if (cpu)
    parallel_ranges(static_cast<int64_t>(pieces.size()), run);
  else
    run(0, static_cast<int64_t>(pieces.size()));
  return y;
}

void LoraLinearImpl::add_lora(int64_t rank, double scaling, double dropout) {
  if (!lora_A.is_empty()) throw DataError("this layer has a LoRA adapter already");
  if (rank < 1) throw DataError("LoRA rank must be at least 1, got " + std::to_string(rank));
  const auto opts = weight.options();
  lora_A = register_module("lora_A", torch::nn::Linear(torch::nn::LinearOptions(weight.size(1), rank).bias(false)));
  lora_B = register_module("lora_B", torch::nn::Linear(torch::nn::LinearOptions(rank, weight.size(0)).bias(false)));
  lora_A->to(opts.device(), opts.dtype().toScalarType());
  lora_B->to(opts.device(), opts.dtype().toScalarType());
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(lora_A->weight, std::sqrt(5.0));
  lora_B->weight.zero_();
  scaling_ = scaling;
  dropout_ = dropout;
}

}  // namespace ragmig::model
