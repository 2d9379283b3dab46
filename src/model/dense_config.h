// sentence-transformers' Dense module: a linear layer and an activation after pooling (LaBSE's 768 -> 768 tanh,
// distiluse-base-multilingual's 768 -> 512 tanh), as its config.json describes it. Torch-free; the layer itself
// is model::Dense (dense.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ragmig::model {

/// The activations of torch.nn that sentence-transformers' Dense configs name (nn.GELU exact, not tanh).
enum class Activation { Identity, Tanh, ReLU, GELU, Sigmoid, SiLU };

/// The class sentence-transformers writes for it ("torch.nn.modules.activation.Tanh", ...).
std::string torch_class_name(Activation activation);
/// The activation of a class name: the torch.nn path sentence-transformers writes or a shorter "torch.nn.Tanh";
/// nullopt for any other.
std::optional<Activation> activation_named(std::string_view class_name);
/// "identity" | "tanh" | "relu" | "gelu" | "sigmoid" | "silu": the names a training config uses.
std::string to_string(Activation activation);
/// The activation of one of those names; nullopt for any other.
std::optional<Activation> activation_from_string(std::string_view name);

struct DenseConfig {
  int64_t in_features = 0;
  int64_t out_features = 0;
  bool bias = true;
  Activation activation = Activation::Tanh;  ///< sentence-transformers' default
  /// use_residual: the input is added to the output (through a bias-free in -> out linear layer when the sizes
  /// differ).
  bool residual = false;

  bool operator==(const DenseConfig&) const = default;
};

/// Reads a Dense module's config.json (`source` names it in errors). Throws DataError naming the file and key for
/// a missing or non-positive size, a value of the wrong type, an activation other than the six above, or a module
/// that reads or writes anything but the pooled sentence embedding (module_input_name / module_output_name).
DenseConfig dense_config_from_json(const nlohmann::json& j, const std::string& source);
/// The config.json sentence-transformers writes (use_residual only when true, as it does).
nlohmann::json to_json(const DenseConfig& config);

}  // namespace ragmig::model
