#include "model/lora.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/embedding_sizes.h"
#include "model/model_folder.h"
#include "model/packaged_models.h"
#include "model/st_folder.h"
#include "model/tensor_names.h"
#include "model/torch_safetensors.h"

namespace fs = std::filesystem;

namespace ragmig::model {
namespace {

constexpr const char* kPeftPrefix = "base_model.model.";
constexpr const char* kWeightsFile = "adapter_model.safetensors";

// The layer an adapter names, checked against the tower: it exists and the factors fit its weight.
LoraLinear layer_for(const std::map<std::string, LoraLinear>& layers, const std::string& name,
                     const LoraAdapter::Factors& f) {
  const auto it = layers.find(name);
  if (it == layers.end()) throw DataError("LoRA adapter names \"" + name + "\", not a linear layer of this BERT model");
  const auto& w = it->second->weight;
  if (f.a.dim() != 2 || f.b.dim() != 2 || f.a.size(1) != w.size(1) || f.b.size(0) != w.size(0) ||
      f.a.size(0) != f.b.size(1))
    throw DataError(fmt::format("LoRA adapter for \"{}\": lora_A {} and lora_B {} do not fit its weight {}", name,
                                shape_text(f.a.sizes()), shape_text(f.b.sizes()), shape_text(w.sizes())));
  return it->second;
}

// An MPNet adapter fits only an MPNet tower: its names, read as BERT's, would otherwise land on a BERT base
// without complaint.
void check_family(BertModel& tower, const LoraAdapter& adapter) {
  if (adapter.model_type == "mpnet" && !tower->config().mpnet())
    throw DataError("the LoRA adapter was trained on an MPNet model; this base model is " + tower->config().model_type);
}

std::map<std::string, LoraLinear> layer_map(BertModel& tower) {
  std::map<std::string, LoraLinear> out;
  for (auto& [name, layer] : linear_layers(tower)) out.emplace(name, layer);
  return out;
}

// The options of adapter_config.json that change what an adapter computes and that ragmig does not apply:
// refused, so that an adapter never loads into something other than what peft trained.
void check_supported(const nlohmann::json& c, const std::string& path) {
  auto refuse = [&](const std::string& key, const std::string& expected) {
    throw DataError(fmt::format("{}: \"{}\" is {}; ragmig applies LoRA adapters with {}", path, key,
                                c.contains(key) ? c.at(key).dump() : "missing", expected));
  };
  if (!c.contains("peft_type") || c.at("peft_type") != "LORA") refuse("peft_type", "\"LORA\"");
  auto present = [&](const char* key) { return c.contains(key) && !c.at(key).is_null(); };
  if (present("use_dora") && c.at("use_dora") != false) refuse("use_dora", "false");
  if (present("bias") && c.at("bias") != "none") refuse("bias", "\"none\"");
  if (present("lora_bias") && c.at("lora_bias") != false) refuse("lora_bias", "false");
  if (present("fan_in_fan_out") && c.at("fan_in_fan_out") != false) refuse("fan_in_fan_out", "false");
  for (const char* key : {"rank_pattern", "alpha_pattern"})
    if (present(key) && !c.at(key).empty()) refuse(key, "{} (one rank and alpha for every layer)");
  for (const char* key : {"modules_to_save", "layers_to_transform", "target_parameters", "trainable_token_indices"})
    if (present(key) && !c.at(key).empty()) refuse(key, "null");
}

LoraSpec spec_from_config(const nlohmann::json& c, const std::string& path) {
  LoraSpec spec;
  try {
    spec.rank = c.at("r").get<int64_t>();
    spec.alpha = c.at("lora_alpha").get<double>();
    spec.dropout = c.value("lora_dropout", 0.0);
    spec.rslora = c.value("use_rslora", false);
    const auto& t = c.at("target_modules");
    spec.targets.clear();
    if (t.is_string()) spec.target_regex = t.get<std::string>();
    else spec.targets = t.get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": " + e.what() + " (expected r, lora_alpha: numbers; target_modules: a list or a string)");
  }
  if (spec.rank < 1) throw DataError(path + ": \"r\" must be at least 1");
  return spec;
}

}  // namespace

double LoraSpec::scaling() const {
  return rslora ? alpha / std::sqrt(static_cast<double>(rank)) : alpha / static_cast<double>(rank);
}

std::vector<std::string> default_lora_targets(const std::string& model_type) {
  if (model_type == "modernbert") return {"Wqkv"};
  if (model_type == "qwen3" || model_type == "qwen2" || model_type == "llama" || model_type == "mistral" ||
      model_type == "gemma3_text")
    return {"q_proj", "k_proj", "v_proj"};
  return {"query", "key", "value"};
}

bool targets_module(const LoraSpec& spec, const std::string& name) {
  if (!spec.target_regex.empty()) return std::regex_match(name, std::regex(spec.target_regex));
  for (const auto& t : spec.targets)
    if (name == t || name.ends_with("." + t)) return true;
  return false;
}

bool is_lora_parameter(const std::string& name) {
  return name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos ||
         name.starts_with("lora_A.") || name.starts_with("lora_B.");
}

int64_t LoraAdapter::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, f] : layers) n += f.a.numel() + f.b.numel();
  return n;
}

std::vector<std::pair<std::string, LoraLinear>> linear_layers(BertModel& tower) {
  std::vector<std::pair<std::string, LoraLinear>> out;
  for (const auto& item : tower->named_modules("", false))
    if (auto layer = std::dynamic_pointer_cast<LoraLinearImpl>(item.value())) out.emplace_back(item.key(), LoraLinear(layer));
  return out;
}

int64_t attach_lora(BertModel& tower, const LoraSpec& spec) {
  for (auto& p : tower->parameters()) p.requires_grad_(false);
  int64_t trainable = 0;
  const std::string& family = tower->config().model_type;
  for (auto& [name, layer] : linear_layers(tower)) {
    if (!targets_module(spec, name) && !targets_module(spec, hf_tensor_name(family, name))) continue;
    layer->add_lora(spec.rank, spec.scaling(), spec.dropout);
    trainable += layer->lora_A->weight.numel() + layer->lora_B->weight.numel();
  }
  if (trainable == 0) {
    std::string names;
    for (const auto& t : spec.targets) names += (names.empty() ? "" : ", ") + t;
    throw ConfigError("lora.targets: no linear layer of the model matches " +
                      (spec.target_regex.empty() ? names : spec.target_regex) +
                      " (BERT's are query, key, value, attention.output.dense, intermediate.dense, output.dense;"
                      " MPNet's also q, k, v, o; ModernBERT's Wqkv, attn.Wo, mlp.Wi, mlp.Wo)");
  }
  return trainable;
}

LoraAdapter own_adapter(BertModel& tower, const LoraSpec& spec) {
  LoraAdapter adapter;
  adapter.spec = spec;
  adapter.model_type = tower->config().model_type;
  for (auto& [name, layer] : linear_layers(tower))
    if (layer->has_lora())
      adapter.layers[name] = {layer->lora_A->weight.detach().to(torch::kCPU, torch::kFloat).clone(),
                              layer->lora_B->weight.detach().to(torch::kCPU, torch::kFloat).clone()};
  return adapter;
}

void merge_adapter(BertModel& tower, const LoraAdapter& adapter) {
  check_family(tower, adapter);
  const auto layers = layer_map(tower);
  torch::NoGradGuard no_grad;
  const double s = adapter.spec.scaling();
  for (const auto& [name, f] : adapter.layers) {
    auto layer = layer_for(layers, name, f);
    auto& w = layer->weight;
    // In float32 then back: B A of a bf16 model would round the delta before it is added.
    w.copy_((w.to(torch::kFloat) + torch::matmul(f.b.to(w.device(), torch::kFloat), f.a.to(w.device(), torch::kFloat)) * s)
                .to(w.scalar_type()));
  }
}

void check_adapter_fits(BertModel& tower, const LoraAdapter& adapter) {
  check_family(tower, adapter);
  const auto layers = layer_map(tower);
  for (const auto& [name, f] : adapter.layers) layer_for(layers, name, f);
}

AdapterRouting::AdapterRouting(BertModel tower, const std::vector<AdapterRange>& ranges) {
  const auto layers = layer_map(tower);
  std::map<std::string, std::vector<LoraRoute>> routes;
  for (const auto& r : ranges) {
    if (!r.adapter) continue;
    check_family(tower, *r.adapter);
    for (const auto& [name, f] : r.adapter->layers) {
      layer_for(layers, name, f);
      routes[name].push_back({r.begin, r.end, f.a, f.b, r.adapter->spec.scaling()});
    }
  }
  for (auto& [name, list] : routes) {
    LoraLinear layer = layers.at(name);
    layer->set_routes(std::move(list));
    routed_.push_back(layer);
  }
}

AdapterRouting::~AdapterRouting() {
  for (auto& layer : routed_) layer->set_routes({});
}

bool is_adapter_folder(const std::string& dir) {
  return fs::is_regular_file(fs::path(dir) / kAdapterConfigFile) && !fs::exists(fs::path(dir) / "config.json");
}

std::string adapter_base(const std::string& dir) {
  const fs::path info_path = fs::path(dir) / "ragmig.json";
  if (fs::exists(info_path)) {
    const auto info = read_json_file(info_path.string());
    if (!info.is_object() || !info.contains("base_model") || !info.at("base_model").is_string())
      throw DataError(info_path.string() + ": expected \"base_model\": the base model folder or package:NAME");
    return info.at("base_model").get<std::string>();
  }
  const std::string config_path = (fs::path(dir) / kAdapterConfigFile).string();
  const auto config = read_json_file(config_path);
  const auto base = config.is_object() ? config.find("base_model_name_or_path") : config.end();
  if (base == config.end() || !base->is_string() || base->get<std::string>().empty())
    throw DataError(config_path + ": \"base_model_name_or_path\" names no model folder: which model is this an adapter of?");
  return base->get<std::string>();
}

LoraAdapter read_peft_adapter(const std::string& dir) {
  const std::string config_path = (fs::path(dir) / kAdapterConfigFile).string();
  const std::string weights_path = (fs::path(dir) / kWeightsFile).string();
  if (!fs::exists(config_path)) throw InputFileError(config_path + ": not found (not a PEFT adapter folder)");
  if (!fs::exists(weights_path)) throw InputFileError(weights_path + ": not found");
  const nlohmann::json config = read_json_file(config_path);
  if (!config.is_object()) throw DataError(config_path + ": expected a JSON object");
  check_supported(config, config_path);
  LoraAdapter adapter;
  adapter.spec = spec_from_config(config, config_path);

  std::map<std::string, torch::Tensor> a, b;
  for (auto& [stored, t] : load_tensors(weights_path)) {
    std::string name = stored;
    if (name.starts_with(kPeftPrefix)) name = name.substr(std::string(kPeftPrefix).size());
    name = name.substr(hf_model_prefix(name).size());  // an adapter trained on BertForX / MPNetForX / ...
    if (name.starts_with("pooler.")) continue;  // ragmig's encoders pool without BERT's pooler
    if (const std::string mpnet = ragmig_tensor_name("mpnet", name); mpnet != name) {
      adapter.model_type = "mpnet";
      name = mpnet;
    }
    if (!t.is_floating_point()) throw DataError(weights_path + ": tensor \"" + stored + "\" is not floating point");
    if (name.ends_with(".lora_A.weight")) a[name.substr(0, name.size() - 14)] = t.to(torch::kFloat);
    else if (name.ends_with(".lora_B.weight")) b[name.substr(0, name.size() - 14)] = t.to(torch::kFloat);
    else throw DataError(weights_path + ": unexpected tensor \"" + stored + "\" (expected <module>.lora_A.weight and .lora_B.weight)");
  }
  for (auto& [name, ta] : a) {
    const auto tb = b.find(name);
    if (tb == b.end()) throw DataError(weights_path + ": \"" + name + ".lora_A.weight\" has no lora_B");
    if (ta.dim() != 2 || tb->second.dim() != 2 || ta.size(0) != adapter.spec.rank || tb->second.size(1) != adapter.spec.rank)
      throw DataError(fmt::format("{}: \"{}\": lora_A {} and lora_B {} do not have rank r = {} ({})", weights_path, name,
                                  shape_text(ta.sizes()), shape_text(tb->second.sizes()), adapter.spec.rank, config_path));
    adapter.layers[name] = {ta, tb->second};
  }
  for (const auto& [name, tb] : b)
    if (!a.count(name)) throw DataError(weights_path + ": \"" + name + ".lora_B.weight\" has no lora_A");
  if (adapter.layers.empty()) throw DataError(weights_path + ": no LoRA tensors");
  return adapter;
}

void write_peft_adapter(const std::string& dir, const LoraAdapter& adapter, const std::string& base_model_path) {
  const LoraSpec& s = adapter.spec;
  // The keys of peft's LoraConfig that change what the adapter computes, and what its loader needs.
  nlohmann::json config = {{"peft_type", "LORA"},
                           {"base_model_name_or_path", base_model_path},
                           {"r", s.rank},
                           {"lora_alpha", s.alpha},
                           {"lora_dropout", s.dropout},
                           {"use_rslora", s.rslora},
                           {"bias", "none"},
                           {"fan_in_fan_out", false},
                           {"use_dora", false},
                           {"modules_to_save", nullptr},
                           {"init_lora_weights", true},
                           {"inference_mode", true},
                           {"task_type", nullptr}};
  config["target_modules"] = s.target_regex.empty() ? nlohmann::json(s.targets) : nlohmann::json(s.target_regex);
  if (adapter.model_type != "bert") config["target_modules"] = nlohmann::json::array();
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& [ragmig_name, f] : adapter.layers) {
    const std::string name = hf_tensor_name(adapter.model_type, ragmig_name);
    if (adapter.model_type != "bert") config["target_modules"].push_back(name);
    tensors[kPeftPrefix + name + ".lora_A.weight"] = f.a.to(torch::kCPU, torch::kFloat).contiguous();
    tensors[kPeftPrefix + name + ".lora_B.weight"] = f.b.to(torch::kCPU, torch::kFloat).contiguous();
  }
  write_file_atomic(fs::path(dir) / kAdapterConfigFile, config.dump(2) + "\n");
  save_tensors((fs::path(dir) / kWeightsFile).string(), tensors, {{"format", "pt"}});
}

void save_adapter_folder(const std::string& dir, const DualAdapter& adapter,
                         const std::optional<TrainingQueries>& training) {
  const std::string base_path = fs::absolute(resolve_model_reference(adapter.base)).lexically_normal().string();
  // A package reference stays one (it resolves on any machine); a folder is kept absolute, so the adapter
  // loads from any working directory.
  const std::string base = adapter.base.starts_with("package:") ? adapter.base : base_path;
  write_folder_atomically(dir, [&](const std::string& tmp) {
    write_peft_adapter(tmp, adapter.query, base_path);
    if (adapter.passage) {
      fs::create_directory(fs::path(tmp) / "passage");
      write_peft_adapter((fs::path(tmp) / "passage").string(), *adapter.passage, base_path + "/passage");
    }
    if (adapter.prompts) write_prompts_file(tmp, *adapter.prompts);
    nlohmann::json info = {{"base_model", base}, {"format_version", kModelFolderFormatVersion}};
    if (training) info["training"] = to_json(*training);
    if (!adapter.matryoshka_dims.empty()) info["matryoshka_dims"] = adapter.matryoshka_dims;
    write_file_atomic(fs::path(tmp) / "ragmig.json", info.dump(2) + "\n");
  });
}

DualAdapter load_adapter_folder(const std::string& dir) {
  DualAdapter out;
  out.query = read_peft_adapter(dir);
  out.base = adapter_base(dir);
  if (is_adapter_folder((fs::path(dir) / "passage").string())) out.passage = read_peft_adapter((fs::path(dir) / "passage").string());
  out.prompts = adapter_prompts(dir);
  out.matryoshka_dims = read_matryoshka_dims(dir);
  return out;
}

std::optional<text::Prompts> adapter_prompts(const std::string& dir) {
  if (!fs::exists(fs::path(dir) / "config_sentence_transformers.json")) return std::nullopt;
  return read_prompts(dir);
}

DualAdapter own_dual_adapter(DualEncoder& net, const LoraSpec& spec, const std::string& base) {
  DualAdapter out;
  out.base = base;
  BertModel query = net->query_tower();
  out.query = own_adapter(query, spec);
  if (!net->spec().shared_towers) {
    BertModel passage = net->passage_tower();
    out.passage = own_adapter(passage, spec);
  }
  return out;
}

void merge_dual_adapter(DualEncoder& net, const DualAdapter& adapter) {
  if (adapter.passage && net->spec().shared_towers)
    throw DataError("the adapter has a passage/ part for a separate passage tower, but the base model has one shared tower");
  BertModel query = net->query_tower();
  merge_adapter(query, adapter.query);
  if (!net->spec().shared_towers) {
    // Separate towers without a passage adapter: the passage tower stays the base's.
    BertModel passage = net->passage_tower();
    if (adapter.passage) merge_adapter(passage, *adapter.passage);
  }
}

}  // namespace ragmig::model
