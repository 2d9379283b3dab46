// Dense module configs (see dense_config.h).
#include "model/dense_config.h"

#include "core/error.h"

namespace ragmig::model {
namespace {

// Each activation's config name and torch.nn's module path of its class (what sentence-transformers' fullname()
// writes).
struct ActivationNames {
  Activation activation;
  const char* name;
  const char* torch_class;
};
const ActivationNames kActivations[] = {{Activation::Identity, "identity", "torch.nn.modules.linear.Identity"},
                                        {Activation::Tanh, "tanh", "torch.nn.modules.activation.Tanh"},
                                        {Activation::ReLU, "relu", "torch.nn.modules.activation.ReLU"},
                                        {Activation::GELU, "gelu", "torch.nn.modules.activation.GELU"},
                                        {Activation::Sigmoid, "sigmoid", "torch.nn.modules.activation.Sigmoid"},
                                        {Activation::SiLU, "silu", "torch.nn.modules.activation.SiLU"}};

std::string_view class_of(std::string_view path) { return path.substr(path.rfind('.') + 1); }

}  // namespace

std::string torch_class_name(Activation activation) {
  for (const auto& a : kActivations)
    if (a.activation == activation) return a.torch_class;
  return "?";
}

std::optional<Activation> activation_named(std::string_view class_name) {
  if (class_name.rfind("torch.nn.", 0) != 0) return std::nullopt;
  for (const auto& a : kActivations)
    if (class_name == a.torch_class || class_name == "torch.nn." + std::string(class_of(a.torch_class)))
      return a.activation;
  return std::nullopt;
}

std::string to_string(Activation activation) {
  for (const auto& a : kActivations)
    if (a.activation == activation) return a.name;
  return "?";
}

std::optional<Activation> activation_from_string(std::string_view name) {
  for (const auto& a : kActivations)
    if (name == a.name) return a.activation;
  return std::nullopt;
}

DenseConfig dense_config_from_json(const nlohmann::json& j, const std::string& source) {
  const auto fail = [&](const std::string& key, const std::string& msg) -> void {
    throw DataError(source + ": key \"" + key + "\": " + msg);
  };
  if (!j.is_object()) throw DataError(source + ": expected a JSON object (a Dense module's config)");
  DenseConfig c;
  for (auto [key, target] : {std::pair{"in_features", &c.in_features}, std::pair{"out_features", &c.out_features}}) {
    const auto it = j.find(key);
    if (it == j.end()) fail(key, "missing");
    if (!it->is_number_integer() || it->get<int64_t>() <= 0)
      fail(key, "expected a positive integer, got " + it->dump());
    *target = it->get<int64_t>();
  }
  for (auto [key, target] : {std::pair{"bias", &c.bias}, std::pair{"use_residual", &c.residual}}) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_boolean()) fail(key, "expected true or false, got " + it->dump());
    *target = it->get<bool>();
  }
  if (const auto it = j.find("activation_function"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) fail("activation_function", "expected a class name, got " + it->dump());
    const auto a = activation_named(it->get<std::string>());
    if (!a)
      fail("activation_function", "\"" + it->get<std::string>() +
                                      "\" is not supported (ragmig runs torch.nn's Identity, Tanh, ReLU, GELU, "
                                      "Sigmoid and SiLU)");
    c.activation = *a;
  }
  for (const char* key : {"module_input_name", "module_output_name"}) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string() || it->get<std::string>() != "sentence_embedding")
      fail(key, "expected \"sentence_embedding\", got " + it->dump() +
                    " (ragmig runs a Dense module on the pooled embedding only)");
  }
  return c;
}

nlohmann::json to_json(const DenseConfig& c) {
  nlohmann::json j = {{"in_features", c.in_features},
                      {"out_features", c.out_features},
                      {"bias", c.bias},
                      {"activation_function", torch_class_name(c.activation)}};
  if (c.residual) j["use_residual"] = true;
  return j;
}

}  // namespace ragmig::model
