// Optional members of the JSON files in model folders, read without nlohmann's type errors: a name looked up
// (a tokenizer.json "type", ...) that is not a string reads as absent, so the caller refuses it as a name it does not
// know, with ragmig's own error naming the file and key. Torch-free, header-only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ragmig::model {

/// j[key], or null when absent (or when j is not an object), without copying it.
inline const nlohmann::json& member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

/// j[key] when it is a string; "" when absent, null or of another type.
inline std::string string_member(const nlohmann::json& j, const char* key) {
  const nlohmann::json& m = member(j, key);
  return m.is_string() ? m.get<std::string>() : std::string();
}

}  // namespace ragmig::model
