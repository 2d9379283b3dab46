// Checkpoint files, manifests and their validation (see checkpoint_store.h).
#include "train/checkpoint_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/strings.h"

namespace fs = std::filesystem;

namespace ragmig::train {

CheckpointStore::CheckpointStore(std::string dir, int64_t keep) : dir_(std::move(dir)), keep_(keep) {
  fs::create_directories(dir_);
}

std::string CheckpointStore::path_for(int64_t step, const char* ext) const {
  return (fs::path(dir_) / fmt::format("ckpt-{:09d}.{}", step, ext)).string();
}

std::string CheckpointStore::save(int64_t step, const std::function<void(torch::serialize::OutputArchive&)>& fill,
                                  const nlohmann::json& config) {
  torch::serialize::OutputArchive archive;
  fill(archive);
  // Streamed from the serialiser to the file, checksummed on the way: a copy of the whole archive in memory
  // (hundreds of MB for a base encoder and its optimiser state) cost more than the writing itself.
  const std::string pt = path_for(step, "pt");
  AtomicFileWriter file(pt);
  uint32_t crc = 0;
  // The serialiser calls back from code that must not throw (its writer's destructor writes the archive's last
  // records, and a short write there ends the process): a failed write (a full disk) is kept, the rest of the
  // bytes are dropped as if written, and it is thrown once the serialiser is done.
  std::exception_ptr failed;
  archive.save_to([&](const void* data, size_t size) -> size_t {
    if (failed) return size;
    const std::string_view bytes(static_cast<const char*>(data), size);
    try {
      file.write(bytes);
    } catch (...) {
      failed = std::current_exception();
    }
    crc = crc32_of(bytes, crc);
    return size;
  });
  if (failed) std::rethrow_exception(failed);
  const uint64_t bytes = file.size();
  file.commit();
  nlohmann::json manifest = {{"format", "ragmig-checkpoint-1"},
                             {"step", step},
                             {"file", fs::path(pt).filename().string()},
                             {"bytes", bytes},
                             {"crc32", crc}};
  if (!config.is_null()) manifest["config"] = config;
  write_file_atomic(path_for(step, "json"), manifest.dump(2) + "\n");
  prune();
  remove_stale_temporaries(dir_, "ckpt-", ".tmp.");  // of earlier checkpoints, from writers killed mid-write
  return pt;
}

std::vector<int64_t> CheckpointStore::steps() const {
  std::vector<int64_t> out;
  if (!fs::exists(dir_)) return out;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != 19 || name.rfind("ckpt-", 0) != 0 || entry.path().extension() != ".json") continue;
    if (const auto step = whole_number(std::string_view(name).substr(5, 9), 0)) out.push_back(*step);
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

std::optional<nlohmann::json> CheckpointStore::newest_config() const {
  for (int64_t step : steps()) {
    const nlohmann::json manifest = nlohmann::json::parse(read_file(path_for(step, "json")), nullptr, false);
    if (manifest.is_object() && manifest.contains("config") && manifest["config"].is_object()) return manifest["config"];
  }
  return std::nullopt;
}

void CheckpointStore::prune() const {
  std::vector<int64_t> all = steps();
  for (size_t i = static_cast<size_t>(keep_); i < all.size(); ++i) {
    std::error_code ec;
    fs::remove(path_for(all[i], "json"), ec);  // the manifest first: a half-pruned checkpoint is invisible
    fs::remove(path_for(all[i], "pt"), ec);
  }
}

std::optional<CheckpointStore::Loaded> CheckpointStore::load_newest(
    const std::function<void(torch::serialize::InputArchive&)>& read) const {
  Loaded result;
  for (int64_t step : steps()) {
    const std::string pt = path_for(step, "pt");
    std::string why;
    try {
      nlohmann::json manifest = nlohmann::json::parse(read_file(path_for(step, "json")));
      std::string bytes = read_file(pt);
      if (manifest.at("bytes").get<uint64_t>() != bytes.size())
        why = fmt::format("size {} != manifest {}", bytes.size(), manifest.at("bytes").get<uint64_t>());
      else if (manifest.at("crc32").get<uint32_t>() != crc32_of(bytes))
        why = "checksum mismatch";
      else if (manifest.at("step").get<int64_t>() != step)
        why = "manifest names another step";
      if (why.empty()) {
        torch::serialize::InputArchive archive;
        archive.load_from(bytes.data(), bytes.size());
        read(archive);
        result.step = step;
        result.path = pt;
        return result;
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
    result.skipped.push_back(pt + ": " + why);
  }
  if (!result.skipped.empty())
    throw IoError("no valid checkpoint in " + dir_ + "; newest rejected: " + result.skipped.front());
  return std::nullopt;
}

}  // namespace ragmig::train
