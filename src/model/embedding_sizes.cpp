// The sizes a model folder's embeddings are used at (see embedding_sizes.h).
#include "model/embedding_sizes.h"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "core/error.h"
#include "model/st_folder.h"

namespace ragmig::model {

int64_t default_size(const EmbeddingSizes& sizes, int64_t full) {
  return sizes.truncate_dim > 0 && sizes.truncate_dim < full ? sizes.truncate_dim : full;
}

std::vector<int64_t> trained_sizes(const EmbeddingSizes& sizes, int64_t full) {
  std::vector<int64_t> out = {full};
  if (sizes.truncate_dim > 0) out.push_back(sizes.truncate_dim);
  out.insert(out.end(), sizes.matryoshka_dims.begin(), sizes.matryoshka_dims.end());
  std::erase_if(out, [&](int64_t d) { return d > full; });
  std::sort(out.begin(), out.end(), std::greater<>());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> read_matryoshka_dims(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(dir) / "ragmig.json";
  if (!std::filesystem::exists(path)) return {};
  const nlohmann::json info = read_json_file(path.string());
  if (!info.is_object() || !info.contains("matryoshka_dims")) return {};
  const nlohmann::json& list = info.at("matryoshka_dims");
  const auto bad = [&](const std::string& what) {
    return DataError(path.string() + ": key \"matryoshka_dims\"" + what);
  };
  if (!list.is_array()) throw bad(": expected an array of embedding sizes, e.g. [384, 128, 64]");
  std::vector<int64_t> dims;
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& d = list[i];
    if (!d.is_number_integer() || d.get<int64_t>() <= 0)
      throw bad("[" + std::to_string(i) + "]: expected a positive integer, got " + d.dump());
    if (std::find(dims.begin(), dims.end(), d.get<int64_t>()) != dims.end())
      throw bad(": lists " + d.dump() + " twice");
    dims.push_back(d.get<int64_t>());
  }
  return dims;
}

void check_matryoshka_dims(const std::vector<int64_t>& dims, int64_t full, const std::string& dir) {
  for (const int64_t d : dims)
    if (d > full)
      throw DataError((std::filesystem::path(dir) / "ragmig.json").string() + ": key \"matryoshka_dims\": " +
                      std::to_string(d) + " exceeds the model's " + std::to_string(full) + " embedding dimensions");
}

}  // namespace ragmig::model
