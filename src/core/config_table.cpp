// TOML through toml++; the key table is a flat vector, small enough that linear look-ups cost nothing.
#include "core/config_table.h"

#include <fmt/format.h>

#include <cmath>

#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <toml++/toml.h>

#include "core/error.h"
#include "core/strings.h"
#include "core/toml_names.h"

namespace ragmig {
namespace {

std::string type_name(const ConfigTable::Target& t) {
  return std::visit(
      [](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, int64_t>) return "integer";
        if constexpr (std::is_same_v<T, double>) return "number";
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::optional<bool>>) return "boolean";
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::optional<std::string>>) return "string";
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) return "integers";
        return "strings";
      },
      t);
}

std::string value_text(const ConfigTable::Target& t) {
  return std::visit(
      [](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::optional<std::string>> || std::is_same_v<T, std::optional<bool>>)
          return *p ? nlohmann::json(**p).dump() : "(unset)";
        else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::string>> ||
                           std::is_same_v<T, std::vector<int64_t>>)
          return nlohmann::json(*p).dump();
        else if constexpr (std::is_same_v<T, bool>) return *p ? "true" : "false";
        else if constexpr (std::is_same_v<T, double>) return fmt::format("{}", *p);
        else return std::to_string(*p);
      },
      t);
}

std::string where(const std::string& source, const toml::node& n) {
  const auto& begin = n.source().begin;
  if (begin.line == 0) return source;
  return fmt::format("{}:{}", source, begin.line);
}

// Writes TOML node `n` into `field`, or throws naming source, key and the expected type.
void assign(ConfigTable::Field& field, const toml::node& n, const std::string& source) {
  // `item`: the element of an array that is not of the array's type.
  auto fail = [&](const toml::node* item = nullptr) {
    const std::string expected = type_name(field.target) == "strings"    ? "an array of strings"
                                 : type_name(field.target) == "integers" ? "an array of integers"
                                 : type_name(field.target) == "integer" ? "an integer"
                                                                        : "a " + type_name(field.target);
    throw ConfigError(fmt::format("{}: key '{}' expects {}, got {}{}", where(source, n), field.key, expected,
                                  toml_type_name(n), item ? " holding " + toml_type_name(*item) : ""));
  };
  std::visit(
      [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          if (!n.is_integer()) fail();
          *p = n.as_integer()->get();
        } else if constexpr (std::is_same_v<T, double>) {
          if (n.is_integer()) {
            *p = static_cast<double>(n.as_integer()->get());
          } else if (n.is_floating_point()) {
            // TOML has nan and inf; no key of ragmig means either (a NaN slips past every "must be positive").
            const double value = n.as_floating_point()->get();
            if (!std::isfinite(value))
              throw ConfigError(fmt::format("{}: key '{}' expects a finite number, got {}", where(source, n), field.key, value));
            *p = value;
          } else {
            fail();
          }
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::optional<bool>>) {
          if (!n.is_boolean()) fail();
          *p = n.as_boolean()->get();
        } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::optional<std::string>>) {
          if (!n.is_string()) fail();
          *p = n.as_string()->get();
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          const toml::array* items = n.as_array();
          if (!items) fail();
          std::vector<int64_t> values;
          for (const auto& item : *items) {
            if (!item.is_integer()) fail(&item);
            values.push_back(item.as_integer()->get());
          }
          *p = std::move(values);
        } else {
          const toml::array* items = n.as_array();
          if (!items) fail();
          std::vector<std::string> values;
          for (const auto& item : *items) {
            if (!item.is_string()) fail(&item);
            values.push_back(item.as_string()->get());
          }
          *p = std::move(values);
        }
      },
      field.target);
}

}  // namespace

void ConfigTable::add_field(const std::string& key, Target target, const std::string& help) {
  RAGMIG_CHECK(key.find('.') != std::string::npos, "config keys are section.name: " + key);
  RAGMIG_CHECK(find(key) == nullptr, "config key added twice: " + key);
  fields_.push_back(Field{key, help, target, value_text(target)});
}

void ConfigTable::add(const std::string& key, int64_t& target, const std::string& help) { add_field(key, &target, help); }
void ConfigTable::add(const std::string& key, double& target, const std::string& help) { add_field(key, &target, help); }
void ConfigTable::add(const std::string& key, bool& target, const std::string& help) { add_field(key, &target, help); }
void ConfigTable::add(const std::string& key, std::optional<bool>& target, const std::string& help) {
  add_field(key, &target, help);
}
void ConfigTable::add(const std::string& key, std::string& target, const std::string& help) {
  add_field(key, &target, help);
}
void ConfigTable::add(const std::string& key, std::optional<std::string>& target, const std::string& help) {
  add_field(key, &target, help);
}
void ConfigTable::add(const std::string& key, std::vector<std::string>& target, const std::string& help) {
  add_field(key, &target, help);
}
void ConfigTable::add(const std::string& key, std::vector<int64_t>& target, const std::string& help) {
  add_field(key, &target, help);
}

bool ConfigTable::is_section(const std::string& name) const {
  for (const auto& f : fields_)
    if (f.key.rfind(name + ".", 0) == 0) return true;
  return false;
}

ConfigTable::Field* ConfigTable::find(const std::string& key) {
  for (auto& f : fields_)
    if (f.key == key) return &f;
  return nullptr;
}

void ConfigTable::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputFileError(path + ": cannot open config file");
  std::stringstream text;
  text << in.rdbuf();
  load_string(text.str(), path);
}

void ConfigTable::load_string(const std::string& toml_text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}:{}: {}", source, e.source().begin.line, e.source().begin.column,
                                  e.description()));
  }
  // Walk the tree; every leaf must be a known key.
  std::function<void(const toml::table&, const std::string&)> walk = [&](const toml::table& t,
                                                                           const std::string& prefix) {
    for (const auto& [k, node] : t) {
      std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      Field* f = find(key);
      if (node.is_table() && !f) {
        walk(*node.as_table(), key);
        continue;
      }
      if (!f && is_section(key))
        throw ConfigError(fmt::format("{}: '{}' is a section: expected a table [{}] of its keys, got {}",
                                      where(source, node), key, key, toml_type_name(node)));
      if (!f) {
        const std::string section = key.substr(0, key.rfind('.') == std::string::npos ? 0 : key.rfind('.'));
        std::string known;
        for (const auto& g : fields_)
          if (g.key.rfind(section + ".", 0) == 0) known += (known.empty() ? "" : ", ") + g.key;
        const std::string hint = suggestion(key);
        const std::string said = known.empty() ? (hint.empty() ? "no such section" : hint)
                                                : (hint.empty() ? "" : hint + " ") + "known in this section: " + known;
        throw ConfigError(fmt::format("{}: unknown key '{}' ({})", where(source, node), key, said));
      }
      assign(*f, node, source);
    }
  };
  walk(root, "");
}

std::string ConfigTable::suggestion(const std::string& key) const {
  const size_t dot = key.rfind('.');
  const std::string section = key.substr(0, dot == std::string::npos ? 0 : dot);
  const std::string leaf = key.substr(dot == std::string::npos ? 0 : dot + 1);
  std::string elsewhere, near;
  for (const auto& g : fields_) {
    if (g.key.size() > leaf.size() && g.key.ends_with("." + leaf))
      elsewhere += (elsewhere.empty() ? "" : "' or '") + g.key;
    if (g.key.rfind(section + ".", 0) != 0) continue;
    const std::string_view known = std::string_view(g.key).substr(section.size() + 1);
    const size_t d = edit_distance(leaf, known);
    // One letter or two off, or the whole of a word of the key ('steps' for 'max_steps', 'batch' for 'batch_size').
    const bool a_word_of_it = ("_" + std::string(known) + "_").find("_" + leaf + "_") != std::string::npos;
    if ((d <= 2 && 2 * d < leaf.size()) || (a_word_of_it && leaf.size() >= 3))
      near += (near.empty() ? "" : "' or '") + g.key;
  }
  const std::string& said = elsewhere.empty() ? near : elsewhere;
  return said.empty() ? "" : "did you mean '" + said + "'?";
}

void ConfigTable::apply_override(const std::string& assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set " + assignment + ": expected section.key=value");
  std::string key = assignment.substr(0, eq);
  std::string value = assignment.substr(eq + 1);
  Field* f = find(key);
  if (!f) {
    const std::string hint = suggestion(key);
    throw ConfigError("--set: unknown key '" + key + "' (" + (hint.empty() ? "" : hint + " ") +
                      "see `--help` for the keys)");
  }
  const bool text = std::holds_alternative<std::string*>(f->target) ||
                    std::holds_alternative<std::optional<std::string>*>(f->target);
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value);
  } catch (const toml::parse_error&) {
    // Digits TOML refuses are a number too large for it, not a word: say so rather than "got a string".
    const bool digits = !value.empty() && value.find_first_not_of("+-0123456789_") == std::string::npos &&
                        value.find_first_of("0123456789") != std::string::npos;
    if (digits && !text)
      throw ConfigError(fmt::format("--set {}: integer out of range (from {} to {}): {}", key,
                                    std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), value));
    parsed = toml::table{{"v", value}};  // a bare word: take it as a string
  }
  // A string field takes the text as written, so `--set data.path=1` stays "1".
  if (text && !parsed["v"].is_string()) parsed = toml::table{{"v", value}};
  assign(*f, *parsed.get("v"), "--set " + key);
}

nlohmann::json ConfigTable::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : fields_) {
    nlohmann::json::json_pointer ptr("/" + [&] {
      std::string s = f.key;
      for (auto& c : s)
        if (c == '.') c = '/';
      return s;
    }());
    std::visit(
        [&](auto* p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, std::optional<std::string>> || std::is_same_v<T, std::optional<bool>>)
            out[ptr] = *p ? nlohmann::json(**p) : nlohmann::json();
          else
            out[ptr] = *p;
        },
        f.target);
  }
  return out;
}

std::string ConfigTable::help_text() const {
  std::string out;
  std::string section;
  for (const auto& f : fields_) {
    std::string s = f.key.substr(0, f.key.rfind('.'));
    if (s != section) {
      section = s;
      out += fmt::format("\n  [{}]\n", section);
    }
    out += fmt::format("    {:<28} {:<8} {:<14} {}\n", f.key, type_name(f.target), f.default_text, f.help);
  }
  return out;
}

}  // namespace ragmig
