// Tensor and module names between ragmig's BERT layers and Hugging Face's DistilBERT and MPNet ones: a
// table of layer parts per family, applied to the part after "encoder.layer.N." (or DistilBERT's
// "transformer.layer.N.").
#include "model/tensor_names.h"

#include <utility>
#include <vector>

namespace ragmig::model {
namespace {

using Parts = std::vector<std::pair<std::string, std::string>>;  // {ragmig's part, the family's}

const Parts kMPNetParts = {{"attention.self.query", "attention.attn.q"},
                           {"attention.self.key", "attention.attn.k"},
                           {"attention.self.value", "attention.attn.v"},
                           {"attention.output.dense", "attention.attn.o"},
                           {"attention.output.LayerNorm", "attention.LayerNorm"}};

const Parts kDistilBertParts = {{"attention.self.query", "attention.q_lin"},
                                {"attention.self.key", "attention.k_lin"},
                                {"attention.self.value", "attention.v_lin"},
                                {"attention.output.dense", "attention.out_lin"},
                                {"attention.output.LayerNorm", "sa_layer_norm"},
                                {"intermediate.dense", "ffn.lin1"},
                                {"output.dense", "ffn.lin2"},
                                {"output.LayerNorm", "output_layer_norm"}};

// `rest` is `part` or starts with `part` + "." (a module name, or a tensor name below it).
bool is_part(const std::string& rest, const std::string& part) {
  return rest.compare(0, part.size(), part) == 0 && (rest.size() == part.size() || rest[part.size()] == '.');
}

// Renames the layer part of `name` (below `from_layers`, e.g. "encoder.layer.") from one side of `parts` to
// the other, and the layers' prefix to `to_layers`. A name outside the layers, or whose part is not in the
// table, comes back as it is.
std::string rename_layer_part(const std::string& name, const Parts& parts, bool to_family,
                              const std::string& from_layers, const std::string& to_layers) {
  if (name.compare(0, from_layers.size(), from_layers) != 0) return name;
  const size_t dot = name.find('.', from_layers.size());
  if (dot == std::string::npos) return name;
  const std::string index = name.substr(from_layers.size(), dot - from_layers.size()), rest = name.substr(dot + 1);
  for (const auto& [ragmig_part, family_part] : parts) {
    const std::string& from = to_family ? ragmig_part : family_part;
    const std::string& to = to_family ? family_part : ragmig_part;
    if (is_part(rest, from)) return to_layers + index + "." + to + rest.substr(from.size());
  }
  return name;
}

}  // namespace

std::string hf_model_prefix(const std::string& name) {
  for (const char* prefix : {"bert.", "distilbert.", "roberta.", "mpnet.", "model."})
    if (name.starts_with(prefix)) return prefix;
  return "";
}

std::string hf_tensor_name(const std::string& model_type, const std::string& name) {
  if (model_type != "mpnet") return name;
  return rename_layer_part(name, kMPNetParts, true, "encoder.layer.", "encoder.layer.");
}

std::string ragmig_tensor_name(const std::string& model_type, const std::string& hf_name) {
  if (model_type == "distilbert")
    return rename_layer_part(hf_name, kDistilBertParts, false, "transformer.layer.", "encoder.layer.");
  if (model_type == "mpnet") return rename_layer_part(hf_name, kMPNetParts, false, "encoder.layer.", "encoder.layer.");
  return hf_name;
}

}  // namespace ragmig::model
