// sentence-transformers' Dense module as a torch module: activation(linear(x)) on the pooled embedding, plus x
// itself (through a bias-free linear layer when the sizes differ) with use_residual. Its parameters carry
// sentence-transformers' names (linear.weight, linear.bias, residual.weight), so a Dense folder's
// model.safetensors loads and saves as it is.
#pragma once

#include <map>
#include <string>
#include <torch/torch.h>

#include "model/dense_config.h"

namespace ragmig::model {

class DenseImpl : public torch::nn::Module {
 public:
  /// PyTorch's nn.Linear initialisation (deterministic given torch::manual_seed).
  explicit DenseImpl(const DenseConfig& config);

  /// [B, in_features] -> [B, out_features], in x's dtype.
  torch::Tensor forward(const torch::Tensor& x);

  const DenseConfig& config() const { return config_; }

 private:
  DenseConfig config_;
  torch::nn::Linear linear_{nullptr};
  torch::nn::Linear residual_{nullptr};  // only with use_residual and in_features != out_features
};
TORCH_MODULE(Dense);

/// The parameters under sentence-transformers' names, float32, contiguous, on the CPU.
std::map<std::string, torch::Tensor> dense_state(Dense& dense);
/// Copies a Dense module's model.safetensors into `dense`, every parameter from the file with its exact shape
/// (F32, F16, BF16 or F64). Throws DataError naming the file and tensor for a missing, unexpected, mis-shaped or
/// non-finite tensor; IoError if the file cannot be read.
void load_dense_weights(Dense& dense, const std::string& safetensors_path);

}  // namespace ragmig::model
