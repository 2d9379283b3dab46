// Checkpoints of a training run: <run>/checkpoints/ckpt-<step>.pt (a LibTorch archive) and beside it
// ckpt-<step>.json (step, byte size, CRC-32, and the run's resolved config: what shaped these weights). Both
// are written atomically, the manifest last, so a checkpoint counts only once it is whole; loading takes the
// newest one whose bytes match its manifest.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ragmig::train {

class CheckpointStore {
 public:
  /// `dir` is created if missing; the newest `keep` checkpoints are kept after each save.
  CheckpointStore(std::string dir, int64_t keep);

  /// Writes checkpoint `step` with what `fill` puts in the archive, and `config` (the run's resolved config;
  /// null: none) in its manifest. Returns its path.
  std::string save(int64_t step, const std::function<void(torch::serialize::OutputArchive&)>& fill,
                   const nlohmann::json& config = nullptr);

  struct Loaded {
    int64_t step = 0;
    std::string path;
    std::vector<std::string> skipped;  ///< newer checkpoints rejected, each with why
  };
  /// Loads the newest valid checkpoint into `read`. nullopt when there is none.
  std::optional<Loaded> load_newest(const std::function<void(torch::serialize::InputArchive&)>& read) const;

  /// Steps of the checkpoints with a manifest, newest first.
  std::vector<int64_t> steps() const;
  /// The config of the newest manifest that holds one and reads as JSON; nullopt when none does (checkpoints
  /// of an older ragmig).
  std::optional<nlohmann::json> newest_config() const;
  const std::string& dir() const { return dir_; }

 private:
  std::string path_for(int64_t step, const char* ext) const;
  void prune() const;

  std::string dir_;
  int64_t keep_;
};

}  // namespace ragmig::train
