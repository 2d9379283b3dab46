// Structured fuzzing of TOML inputs, as json_variants.h does for JSON: each place a document holds a value (every
// key of every table, an array's elements as one), given values of every TOML type and edge in turn (2^63-1, nan,
// inf, "", [], { a = 1 }, a date-time, ...) — what random byte edits seldom produce and what readers that trust a
// key's type get wrong. Used by tests/badinput's TOML fuzz test and fuzz/replay_main.cpp.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace ragmig::testing {

/// The TOML text of one value of each type, and the edges of numbers and strings.
inline const std::vector<std::string>& toml_edge_values() {
  static const std::vector<std::string> values = {
      "0", "-1", "1", "9223372036854775807", "-9223372036854775808", "1e308", "-1e308", "0.5", "nan", "inf",
      "-inf", "true", "\"\"", "\"x\"", "\"-1\"", "\"gpu:1\"", "[]", "[0]", "[\"\"]", "[1, \"a\"]", "[[]]",
      "{}", "{ a = 1 }", "{ choice = [] }", "2026-11-26T08:00:00Z", "2026-11-26", "08:00:00"};
  return values;
}

/// A step on the way to a place: a key of a table, or an element of an array.
struct TomlStep {
  std::string key;   ///< a table's key; empty for an array element
  size_t index = 0;  ///< an array element's index
  bool element() const { return key.empty(); }
};
using TomlPlace = std::vector<TomlStep>;

/// The place's keys joined with dots, elements as "#" ("space.train.lr.choice.#").
inline std::string toml_place_text(const TomlPlace& place) {
  std::string out;
  for (const auto& s : place) out += (out.empty() ? "" : ".") + (s.element() ? std::string("#") : s.key);
  return out;
}

/// The last key on the way to `place` (an element's array key): what an error about it should name.
inline std::string toml_place_key(const TomlPlace& place) {
  for (auto it = place.rbegin(); it != place.rend(); ++it)
    if (!it->element()) return it->key;
  return "";
}

/// Every place of `root` that holds a value (leaves and the tables and arrays above them), one of each shape: every
/// key once, an array's first element standing for all of them. The root is not a place.
inline std::vector<TomlPlace> toml_places(const toml::table& root) {
  std::map<std::string, TomlPlace> by_shape;
  std::function<void(const toml::node&, const TomlPlace&)> walk = [&](const toml::node& n, const TomlPlace& at) {
    if (!at.empty()) by_shape.emplace(toml_place_text(at), at);
    if (const auto* t = n.as_table()) {
      for (auto&& [k, v] : *t) {
        TomlPlace next = at;
        next.push_back({std::string(k.str()), 0});
        walk(v, next);
      }
    } else if (const auto* a = n.as_array(); a && !a->empty()) {
      TomlPlace next = at;
      next.push_back({"", 0});
      walk(*a->get(0), next);
    }
  };
  walk(root, {});
  std::vector<TomlPlace> out;
  for (auto& [shape, place] : by_shape) out.push_back(std::move(place));
  return out;
}

/// `root` with the value at `place` replaced by `value` (a node of any type).
inline toml::table with_toml_value(const toml::table& root, const TomlPlace& place, const toml::node& value) {
  toml::table out = root;
  toml::node* parent = &out;
  for (size_t i = 0; i + 1 < place.size(); ++i) {
    const TomlStep& s = place[i];
    parent = s.element() ? parent->as_array()->get(s.index) : parent->as_table()->get(s.key);
  }
  const TomlStep& last = place.back();
  value.visit([&](const auto& v) {
    if (last.element()) {
      auto& array = *parent->as_array();
      array.replace(array.cbegin() + static_cast<std::ptrdiff_t>(last.index), v);
    } else {
      parent->as_table()->insert_or_assign(last.key, v);
    }
  });
  return out;
}

/// TOML text of `root` (toml++'s formatter: sub-tables as [headers], inline tables kept inline).
inline std::string toml_text(const toml::table& root) {
  std::ostringstream out;
  out << root;
  return out.str();
}

/// Calls `f` with the text of `root` edited at each of toml_places(root) to each of toml_edge_values(), until `f`
/// returns false.
inline void for_each_toml_variant(
    const toml::table& root,
    const std::function<bool(const std::string& variant, const TomlPlace& at, const std::string& value)>& f) {
  static const std::vector<toml::table> values = [] {
    std::vector<toml::table> out;
    for (const auto& v : toml_edge_values()) out.push_back(toml::parse("v = " + v));
    return out;
  }();
  for (const auto& at : toml_places(root))
    for (size_t i = 0; i < values.size(); ++i)
      if (!f(toml_text(with_toml_value(root, at, *values[i].get("v"))), at, toml_edge_values()[i])) return;
}

}  // namespace ragmig::testing
