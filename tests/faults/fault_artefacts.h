// The artefacts fault_writer writes and test_faults checks: each version's content is a function of its
// number, so a reader can tell a whole version from a torn one. Every reader returns nullopt when nothing
// was written yet and throws when what is there is not one whole version.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "index/bm25_index.h"
#include "model/dual_encoder.h"
#include "model/model_folder.h"
#include "support/tiny_bert.h"
#include "train/checkpoint_store.h"

namespace ragmig::testing {

// About 1 MB a checkpoint: long enough a write that kills land inside it.
inline torch::Tensor checkpoint_tensor(int64_t step) { return torch::full({256 * 1024}, static_cast<float>(step)); }

/// The newest checkpoint's step, after checking that its tensor is that step's.
inline std::optional<int64_t> newest_checkpoint(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return std::nullopt;
  torch::Tensor w;
  const auto loaded = train::CheckpointStore(dir.string(), 2).load_newest([&](torch::serialize::InputArchive& a) { a.read("w", w); });
  if (!loaded) return std::nullopt;
  if (!torch::equal(w, checkpoint_tensor(loaded->step))) throw std::runtime_error("checkpoint " + loaded->path + " holds another step's tensor");
  return loaded->step;
}

inline std::vector<std::string> fault_vocab() {
  std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (char c = 'a'; c <= 'z'; ++c) v.push_back(std::string(1, c));
  return v;
}

// About 1.6 MB of float32 weights.
inline model::DualEncoder fault_model() {
  model::EncoderSpec spec;
  spec.bert = tiny_bert_config(static_cast<int64_t>(fault_vocab().size()), 128, 2, 64);
  return model::DualEncoder(spec);
}

inline void set_model_version(model::DualEncoder& model, int64_t version) {
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.fill_(static_cast<float>(version));
}

/// The version every weight of the model folder holds (all the same, or it is not one whole version).
inline std::optional<int64_t> model_version(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir)) return std::nullopt;
  model::LoadedModel loaded = model::load_model_folder(dir.string());
  std::optional<float> value;
  for (const auto& p : loaded.model->parameters()) {
    const float first = p.flatten()[0].item<float>();
    if (!value) value = first;
    if (!torch::all(p == *value).item<bool>()) throw std::runtime_error("model folder mixes two versions");
  }
  return static_cast<int64_t>(*value);
}

inline index::Bm25Index bm25_for_version(int64_t version) {
  std::vector<std::string> ids, texts;
  for (int i = 0; i < 3000; ++i) {
    ids.push_back("v" + std::to_string(version) + "-" + std::to_string(i));
    texts.push_back("version " + std::to_string(version) + " passage " + std::to_string(i) + " words of filler text w" +
                    std::to_string(i % 97) + " w" + std::to_string(i % 89) + " w" + std::to_string(i % 83));
  }
  std::vector<index::DocumentView> docs;
  for (size_t i = 0; i < ids.size(); ++i) docs.push_back({ids[i], "", texts[i]});
  return index::Bm25Index::build(docs, index::Bm25Spec{}, 1);
}

inline std::optional<int64_t> bm25_version(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) return std::nullopt;
  const index::Bm25Index index = index::Bm25Index::load(file.string());
  const std::string first(index.doc_id(0));
  const int64_t version = std::stoll(first.substr(1, first.find('-') - 1));
  if (index.size() != 3000 || index.doc_id(2999) != "v" + std::to_string(version) + "-2999")
    throw std::runtime_error(file.string() + " is not one whole version");
  return version;
}

// results.json and report.html are both written by write_file_atomic (apps/batch_command.cpp,
// report/html_report.cpp): about 400 KB here.
inline std::string results_for_version(int64_t version) {
  nlohmann::json j = {{"version", version}, {"pad", std::string(400000, static_cast<char>('a' + version % 26))}};
  return j.dump();
}

inline std::optional<int64_t> results_version(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(read_file(file));  // throws on a torn file
  const int64_t version = j.at("version").get<int64_t>();
  if (j.at("pad").get<std::string>() != std::string(400000, static_cast<char>('a' + version % 26)))
    throw std::runtime_error(file.string() + " is not one whole version");
  return version;
}

}  // namespace ragmig::testing
