// LoRA adapters on a BERT tower, in PEFT's terms so that adapters move between ragmig and peft unchanged:
// PEFT's target rule (a module is adapted when its name is a target or ends with "." + target), PEFT's scaling
// (alpha / r, or alpha / sqrt(r) with rsLoRA) and PEFT's folder (adapter_config.json, adapter_model.safetensors
// with tensors named base_model.model.<module>.lora_A.weight / .lora_B.weight).
//
// Module names are ragmig's (BERT's, bert.h); an MPNet base's adapter is written and read under MPNet's
// (attention.attn.q, ...; tensor_names.h), which PEFT finds on MPNetModel.
//
// An adapter folder of a ragmig dual encoder is a PEFT folder for the query (or shared) tower, plus passage/,
// another, when the towers are separate; ragmig.json names the base model as the user did (package:NAME stays
// portable across machines), adapter_config.json as PEFT wants it (the resolved path).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <torch/torch.h>
#include <utility>
#include <vector>

#include "model/bert.h"
#include "model/dual_encoder.h"
#include "model/training_record.h"
#include "text/prompts.h"

namespace ragmig::model {

struct LoraSpec {
  int64_t rank = 8;
  double alpha = 16;
  double dropout = 0.0;
  /// PEFT's target_modules as a list; module names are HF BertModel's ("encoder.layer.0.attention.self.query"),
  /// or for an MPNet base also MPNet's ("encoder.layer.0.attention.attn.q"): either names a layer.
  std::vector<std::string> targets{"query", "key", "value"};
  /// PEFT's target_modules as one string: a regular expression the whole module name must match. Wins if set.
  std::string target_regex;
  bool rslora = false;

  double scaling() const;
};

/// The layers LoRA adapts when none are named, by config.json's model_type: query, key and value (PEFT's and
/// ragmig's names of BERT's layers, which MPNet's are here too); ModernBERT's fused Wqkv.
std::vector<std::string> default_lora_targets(const std::string& model_type);

/// PEFT's rule: true if `module_name` is targeted by spec.
bool targets_module(const LoraSpec& spec, const std::string& module_name);
/// True for the parameters that adapters add (".lora_A." / ".lora_B." in the name).
bool is_lora_parameter(const std::string& name);

/// One adapter of one tower: its factors by module name.
struct LoraAdapter {
  struct Factors {
    torch::Tensor a;  ///< [r, in]
    torch::Tensor b;  ///< [out, r]
  };
  LoraSpec spec;
  std::map<std::string, Factors> layers;  ///< by ragmig's module name
  /// The base model's family (BertConfig::model_type): "mpnet" writes MPNet's module names and, as
  /// target_modules, the adapted modules' full names (PEFT matches those on MPNetModel whatever the targets were).
  std::string model_type = "bert";

  int64_t parameter_count() const;
};

/// The tower's linear layers by module name, in model order.
std::vector<std::pair<std::string, LoraLinear>> linear_layers(BertModel& tower);

/// Training: gives every targeted layer a trainable adapter and freezes every other parameter of the tower.
/// Returns the number of trainable parameters. Throws ConfigError if no layer is targeted.
int64_t attach_lora(BertModel& tower, const LoraSpec& spec);
/// The tower's own adapters (see attach_lora) as float32 CPU copies.
LoraAdapter own_adapter(BertModel& tower, const LoraSpec& spec);
/// Adds `adapter` to the weights (W += s B A) of a tower without adapters. Throws DataError naming the
/// module if the adapter does not fit the tower, or if it is an MPNet adapter and the tower is not MPNet.
void merge_adapter(BertModel& tower, const LoraAdapter& adapter);

/// Throws DataError naming the layer if `adapter` names a layer the tower lacks or its factors do not fit.
void check_adapter_fits(BertModel& tower, const LoraAdapter& adapter);

/// Rows [begin, end) of a batch and the adapter they use (null: the base model alone).
struct AdapterRange {
  int64_t begin = 0, end = 0;
  const LoraAdapter* adapter = nullptr;
};

/// Serving: while alive, the tower's forward passes add each range's adapter to its rows; the base product is
/// computed once for the whole batch. The adapters must outlive the routing and fit the tower (checked).
class AdapterRouting {
 public:
  AdapterRouting(BertModel tower, const std::vector<AdapterRange>& ranges);
  ~AdapterRouting();
  AdapterRouting(const AdapterRouting&) = delete;
  AdapterRouting& operator=(const AdapterRouting&) = delete;

 private:
  std::vector<LoraLinear> routed_;
};

/// True if `dir` is a PEFT adapter folder: adapter_config.json and no config.json (a model folder that also
/// holds an adapter config stays a model folder).
bool is_adapter_folder(const std::string& dir);
/// The base model an adapter folder names: ragmig.json's base_model, else adapter_config.json's
/// base_model_name_or_path. Reads no tensors. Throws DataError if neither names one.
std::string adapter_base(const std::string& dir);

/// Reads one PEFT LoRA folder (MPNet's module names, and a "bert." / "mpnet." model prefix, read as ragmig's).
/// Throws DataError naming the file and key or tensor for what ragmig cannot
/// apply (another peft_type, DoRA, biases, fan_in_fan_out, modules_to_save, per-layer rank or alpha
/// patterns), IoError if a file is missing.
LoraAdapter read_peft_adapter(const std::string& dir);
/// Writes adapter_config.json and adapter_model.safetensors into the existing folder `dir` (each atomically).
void write_peft_adapter(const std::string& dir, const LoraAdapter& adapter, const std::string& base_model_path);

/// The adapters of a dual encoder: the query (or shared) tower's, and the passage tower's when separate.
struct DualAdapter {
  std::string base;  ///< the base model as given (a folder or package:NAME)
  LoraAdapter query;
  std::optional<LoraAdapter> passage;
  /// The prompts the adapter was trained with, where they are its own (config_sentence_transformers.json in
  /// its folder); none: its base model's.
  std::optional<text::Prompts> prompts;
  /// The Matryoshka sizes it was trained for (ragmig.json's "matryoshka_dims", embedding_sizes.h); {} = none.
  std::vector<int64_t> matryoshka_dims;
};

/// Writes the adapter folder (whole, into place, as save_model_folder does). base is the reference the user
/// gave; adapter_config.json gets its resolved path; `training` (training_record.h) and the Matryoshka sizes go
/// into ragmig.json.
void save_adapter_folder(const std::string& dir, const DualAdapter& adapter,
                         const std::optional<TrainingQueries>& training = std::nullopt);
/// An adapter folder's own prompts (a config_sentence_transformers.json beside its adapter files, written where
/// its training's differed from its base's); none: its base model's apply.
std::optional<text::Prompts> adapter_prompts(const std::string& dir);
/// Reads an adapter folder that ragmig or peft wrote; the base comes from ragmig.json, else from
/// adapter_config.json's base_model_name_or_path.
DualAdapter load_adapter_folder(const std::string& dir);
/// The adapters of `net` (see attach_lora) with their base.
DualAdapter own_dual_adapter(DualEncoder& net, const LoraSpec& spec, const std::string& base);
/// Merges into each tower of `net`. Throws DataError if the adapter has a passage part and the towers are
/// shared.
void merge_dual_adapter(DualEncoder& net, const DualAdapter& adapter);

}  // namespace ragmig::model
