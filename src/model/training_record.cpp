// ragmig.json's "training" (see training_record.h).
#include "model/training_record.h"

#include <filesystem>

#include "core/error.h"
#include "model/st_folder.h"

namespace ragmig::model {

nlohmann::json to_json(const TrainingQueries& training) {
  return {{"split", training.split}, {"held_out_queries", training.held_out}};
}

std::optional<TrainingQueries> read_training_queries(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(dir) / "ragmig.json";
  if (!std::filesystem::exists(path)) return std::nullopt;
  const nlohmann::json info = read_json_file(path.string());
  if (!info.is_object() || !info.contains("training")) return std::nullopt;
  const nlohmann::json& t = info.at("training");
  const auto bad = [&](const std::string& what) {
    return DataError(path.string() + ": \"training\"" + what);
  };
  if (!t.is_object()) throw bad(": expected an object {\"split\": ..., \"held_out_queries\": [...]}");
  if (!t.contains("split") || !t.at("split").is_string() || t.at("split").get<std::string>().empty())
    throw bad(".split: expected the name of a qrels split");
  TrainingQueries out;
  out.split = t.at("split").get<std::string>();
  if (t.contains("held_out_queries")) {
    const nlohmann::json& ids = t.at("held_out_queries");
    if (!ids.is_array()) throw bad(".held_out_queries: expected an array of query ids");
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!ids[i].is_string() || ids[i].get<std::string>().empty())
        throw bad(".held_out_queries[" + std::to_string(i) + "]: expected a query id (a non-empty string)");
      out.held_out.push_back(ids[i].get<std::string>());
    }
  }
  return out;
}

}  // namespace ragmig::model
