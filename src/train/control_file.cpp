// Parsing and watching <run>/control.json (see control_file.h).
#include "train/control_file.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_errors.h"

namespace ragmig::train {

ControlRequest parse_control(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(path + ": not valid JSON (" + describe_json_error(e) + ")");
  }
  if (!j.is_object()) throw DataError(path + ": expected a JSON object such as {\"batch_size\": 32}");
  ControlRequest r;
  for (const auto& [key, value] : j.items()) {
    int64_t* field = key == "batch_size" ? &r.batch_size
                     : key == "chunk_size" ? &r.chunk_size
                     : key == "after_step" ? &r.after_step
                                           : nullptr;
    if (!field) throw DataError(path + ": unknown key '" + key + "' (expected batch_size, chunk_size, after_step)");
    const int64_t least = key == "after_step" ? 0 : 1;
    if (!value.is_number_integer() || value.get<int64_t>() < least)
      throw DataError(path + ": key '" + key + "' must be an integer >= " + std::to_string(least) + ", got " +
                      value.dump());
    *field = value.get<int64_t>();
  }
  return r;
}

std::optional<ControlRequest> ControlWatch::poll() {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return std::nullopt;  // the common case, every step: no exception
  std::string text;
  try {
    text = read_file(path_);
  } catch (const IoError&) {
    return std::nullopt;  // absent (or replaced while read: the next poll sees the new file)
  }
  if (text == last_text_) return std::nullopt;
  last_text_ = std::move(text);
  return parse_control(last_text_, path_);
}

}  // namespace ragmig::train
