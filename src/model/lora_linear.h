// BERT's linear layer, able to carry LoRA (Hu et al. 2021) the way PEFT does: y = x W^T + b + s * B(A(dropout(x)))
// with A [r, in], B [out, r] and s = alpha / r. Two uses: its own trainable adapter (lora_A, lora_B: PEFT's
// parameter names, so names map one to one onto PEFT's adapter files), and, for serving, adapters routed to
// row ranges of a batch: the base product is computed once for every row, each range adds its own adapter's
// low-rank delta — or, where one adapter has every row of a large enough batch, the product runs with the merged
// weight W + s B A instead (product_weight).
#pragma once

#include <cstdint>
#include <torch/torch.h>
#include <vector>

namespace ragmig::model {

/// One adapter's factors for one layer, applied to the batch rows [begin, end).
struct LoraRoute {
  int64_t begin = 0, end = 0;
  torch::Tensor a;  ///< [r, in]
  torch::Tensor b;  ///< [out, r]
  double scaling = 1.0;
};

class LoraLinearImpl : public torch::nn::Module {
 public:
  /// weight [out, in] and bias [out] (none without `bias`: ModernBERT's), named as torch::nn::Linear names them;
  /// PyTorch's default initialisation.
  LoraLinearImpl(int64_t in_features, int64_t out_features, bool bias = true);

  /// x [..., in] -> [..., out]: the base product, plus the own adapter if any, plus the routed ones (which index
  /// x's first dimension).
  torch::Tensor forward(const torch::Tensor& x);

  /// What forward(x) returns, given `base`: x's product with product_weight(x) and bias computed elsewhere
  /// (BertSelfAttention makes q, k and v in one matmul over the three layers' weights). Adds the adapters to it.
  torch::Tensor adapt(const torch::Tensor& x, torch::Tensor base);

  /// The weight of the product over x: W, or W + s B A (in W's dtype) where one routed adapter has every row of x
  /// and x has at least as many rows (tokens) as W has inputs or outputs, so that writing the merged weight
  /// costs less than the adapter's two products over the rows; adapt then adds no route.
  torch::Tensor product_weight(const torch::Tensor& x) const;

  /// Adds a trainable adapter of rank r: lora_A as PEFT initialises it (Kaiming-uniform, a = sqrt(5)), lora_B
  /// zeros, so the layer's output is unchanged until training moves B. Throws DataError if one is there already.
  void add_lora(int64_t rank, double scaling, double dropout);
  bool has_lora() const { return !lora_A.is_empty(); }

  /// Serving: the adapters of the following forward calls' row ranges (none: clear). Ranges must not overlap.
  void set_routes(std::vector<LoraRoute> routes) { routes_ = std::move(routes); }

  torch::Tensor weight, bias;  ///< bias undefined without one
  torch::nn::Linear lora_A{nullptr}, lora_B{nullptr};

 private:
  double scaling_ = 0.0;
  double dropout_ = 0.0;
  std::vector<LoraRoute> routes_;

  bool merges_routes(const torch::Tensor& x) const;
};
TORCH_MODULE(LoraLinear);

}  // namespace ragmig::model
