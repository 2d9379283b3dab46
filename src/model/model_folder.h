// Model folders that Hugging Face tools read: config.json, vocab.txt and model.safetensors (HF BERT names,
// float32), plus ragmig.json for what HF does not know (pooling, normalisation, shared or separate towers).
// With separate towers the query tower sits at the top (so HF tools load it) and the passage tower in passage/.
#pragma once

#include <string>
#include <vector>

#include "model/dual_encoder.h"
#include "model/torch_safetensors.h"

namespace ragmig::model {

/// ragmig.json's "format_version" written now; newer versions are refused on load.
inline constexpr int kModelFolderFormatVersion = 1;

/// Writes the folder: every file atomically into `dir` + ".tmp-<pid>", then the whole folder is renamed into
/// place (swapping atomically with an existing folder where the OS allows), so a half-written model folder
/// never appears under `dir`. Throws DataError if vocab has more tokens than the config's vocab_size (or a
/// token with a line break), IoError if writing fails.
void save_model_folder(const std::string& dir, DualEncoder& model, const std::vector<std::string>& vocab);

struct LoadedModel {
  DualEncoder model;
  std::vector<std::string> vocab;
};

/// Loads a folder written by save_model_folder or by Hugging Face (BertModel, or BertForX whose tensors
/// carry a "bert." prefix: the heads outside it are ignored, as are "pooler.*" and
/// "embeddings.position_ids"). ragmig.json is optional (mean pooling, normalised, shared towers). F32, F16,
/// BF16 and F64 tensors are converted to float32. Throws DataError naming the file and tensor or key for
/// missing, unexpected or mis-shaped tensors, and "vocabulary and model mismatch: ..." when vocab.txt has
/// more lines than vocab_size or the word embeddings do not have vocab_size rows; IoError if a file is missing.
/// The model is returned in training mode, as torch modules are built.
LoadedModel load_model_folder(const std::string& dir);

/// The tower's parameters under HF BertModel names, float32, contiguous, on the CPU.
std::map<std::string, torch::Tensor> bert_state(BertModel& tower);
/// Copies the tensors of a safetensors file into `tower`, with the name handling of load_model_folder.
void load_bert_weights(BertModel& tower, const std::string& safetensors_path);

/// vocab.txt: one token per line (a final line break is optional). Throws IoError if unreadable.
std::vector<std::string> read_vocab_file(const std::string& path);

}  // namespace ragmig::model
