// The Dense module (see dense.h). Loading is as strict as the encoder's (model_folder.cpp): a Dense layer
// half-loaded from a foreign file would embed, just wrongly.
#include "model/dense.h"

#include <set>

#include "core/error.h"
#include "model/torch_safetensors.h"

namespace ragmig::model {

DenseImpl::DenseImpl(const DenseConfig& config) : config_(config) {
  namespace nn = torch::nn;
  linear_ = register_module(
      "linear", nn::Linear(nn::LinearOptions(config.in_features, config.out_features).bias(config.bias)));
  if (config.residual && config.in_features != config.out_features)
    residual_ = register_module("residual",
                                nn::Linear(nn::LinearOptions(config.in_features, config.out_features).bias(false)));
}

torch::Tensor DenseImpl::forward(const torch::Tensor& x) {
  torch::Tensor y = linear_->forward(x);
  switch (config_.activation) {
    case Activation::Identity: break;
    case Activation::Tanh: y = torch::tanh(y); break;
    case Activation::ReLU: y = torch::relu(y); break;
    case Activation::GELU: y = torch::gelu(y); break;
    case Activation::Sigmoid: y = torch::sigmoid(y); break;
    case Activation::SiLU: y = torch::silu(y); break;
  }
  if (config_.residual) y = y + (residual_ ? residual_->forward(x) : x);
  return y;
}

std::map<std::string, torch::Tensor> dense_state(Dense& dense) {
  std::map<std::string, torch::Tensor> state;
  for (const auto& p : dense->named_parameters())
    state.emplace(p.key(), p.value().detach().to(torch::kCPU, torch::kFloat).contiguous());
  return state;
}

void load_dense_weights(Dense& dense, const std::string& path) {
  const SafetensorsFile file = read_safetensors(path);
  auto params = dense->named_parameters();
  std::set<std::string> loaded;
  for (const auto& [name, raw] : file.tensors) {
    auto* target = params.find(name);
    if (!target)
      throw DataError(path + ": unexpected tensor \"" + name +
                      "\" (not a parameter of a Dense module with its config)");
    copy_weight(*target, raw, path + ": tensor \"" + name + "\"");
    loaded.insert(name);
  }
  for (const auto& p : params)
    if (!loaded.count(p.key())) throw DataError(path + ": tensor \"" + p.key() + "\" missing");
}

}  // namespace ragmig::model
