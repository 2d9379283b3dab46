#include "model/lora_linear.h"

#include <cmath>

#include "core/error.h"
#include "model/keyed_dropout.h"

namespace ragmig::model {

LoraLinearImpl::LoraLinearImpl(int64_t in_features, int64_t out_features) {
  weight = register_parameter("weight", torch::empty({out_features, in_features}));
  bias = register_parameter("bias", torch::empty({out_features}));
  // nn.Linear's reset_parameters: Kaiming-uniform weight, bias uniform in +-1/sqrt(fan_in).
  torch::NoGradGuard no_grad;
  torch::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  bias.uniform_(-bound, bound);
}

torch::Tensor LoraLinearImpl::forward(const torch::Tensor& x) {
  // aten::linear folds the batch into one addmm, as Python's nn.Linear does (torch::nn::Linear's forward runs
  // a matmul and a separate bias add: 1.6x the mm time of a training step, bench/train --profile).
  auto y = torch::linear(x, weight, bias);
  if (!lora_A.is_empty()) {
    auto h = dropout_ > 0 ? model::keyed_dropout(x, dropout_, is_training()) : x;
    // y + s (h A^T) B^T as one addmm (alpha = s): one new tensor of y's size where the product, its scaled
    // copy and the sum made three.
    const std::vector<int64_t> shape = y.sizes().vec();
    const auto down = torch::linear(h, lora_A->weight).reshape({-1, lora_A->weight.size(0)});
    y = torch::addmm(y.reshape({-1, shape.back()}), down, lora_B->weight.t(), 1.0, scaling_).view(shape);
  }
  for (const auto& r : routes_) {
    // In place on a view of y: the routes exist only for inference, where no graph needs y unchanged.
    auto rows = y.narrow(0, r.begin, r.end - r.begin);
    rows.add_(torch::linear(torch::linear(x.narrow(0, r.begin, r.end - r.begin), r.a), r.b), r.scaling);
  }
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
