// Structured fuzzing of JSON inputs: each place a document holds a value, given values of every type and edge
// (null, -1, 2^63-1, 1e308, "", [], {}, ...) in turn — what random byte edits seldom produce and what readers that
// trust a key's type get wrong. Used by the model folder fuzz test and fuzz/replay_main.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ragmig::testing {

/// One value of each JSON type, and the edges of numbers and strings.
inline const std::vector<nlohmann::json>& edge_values() {
  static const std::vector<nlohmann::json> values = {
      nullptr, true, -1, 0, 1, 3, 1.5, -1e308, 1e308, INT64_MAX, INT64_MIN, "", "x", "[UNK]",
      nlohmann::json::array(), nlohmann::json::array({1, "a"}), nlohmann::json::object(), {{"a", 1}}};
  return values;
}

/// `at`'s path in `doc` with array indices and the keys of objects of more than 20 members (vocabularies) as "#".
inline std::string json_shape(const nlohmann::json& doc, const nlohmann::json::json_pointer& at) {
  if (at.empty()) return "";
  const nlohmann::json& parent = doc.at(at.parent_pointer());
  const bool many = parent.is_array() || parent.size() > 20;
  return json_shape(doc, at.parent_pointer()) + "/" + (many ? "#" : at.back());
}

/// Every place of `doc` that holds a value (the leaves and the containers above them), one of each shape: every
/// key once, array elements and a vocabulary's entries alike. The root is not a place.
inline std::vector<nlohmann::json::json_pointer> json_places(const nlohmann::json& doc) {
  std::map<std::string, nlohmann::json::json_pointer> by_shape;
  const nlohmann::json leaves = doc.flatten();
  for (const auto& [leaf, _] : leaves.items())
    for (nlohmann::json::json_pointer p(leaf); !p.empty(); p = p.parent_pointer())
      by_shape.emplace(json_shape(doc, p), p);
  std::vector<nlohmann::json::json_pointer> out;
  for (const auto& [shape, p] : by_shape) out.push_back(p);
  return out;
}

/// Calls `f` with `doc` edited at each of json_places(doc) to each of edge_values(), until `f` returns false.
inline void for_each_json_variant(
    const nlohmann::json& doc,
    const std::function<bool(const nlohmann::json& variant, const nlohmann::json::json_pointer& at,
                             const nlohmann::json& value)>& f) {
  for (const auto& at : json_places(doc))
    for (const auto& value : edge_values()) {
      nlohmann::json variant = doc;
      variant[at] = value;
      if (!f(variant, at, value)) return;
    }
}

}  // namespace ragmig::testing
