// A declarative table of config keys bound to the fields of a module's config struct: one place that gives
// TOML loading, `--set section.key=value` overrides, type checks, `--help` text and the resolved config.
// Defaults are the struct's own initial values. Unknown keys and wrong types throw ConfigError naming the
// source (file:line or --set) and the key.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ragmig {

class ConfigTable {
 public:
  using Target = std::variant<int64_t*, double*, bool*, std::optional<bool>*, std::string*, std::optional<std::string>*,
                              std::vector<std::string>*, std::vector<int64_t>*>;
  struct Field {
    std::string key;   ///< dotted key, "section.name"
    std::string help;  ///< one line for --help
    Target target;     ///< the struct field the value is written to
    std::string default_text;  ///< the field's value when it was added, as TOML
  };

  void add(const std::string& key, int64_t& target, const std::string& help);
  void add(const std::string& key, double& target, const std::string& help);
  void add(const std::string& key, bool& target, const std::string& help);
  /// A boolean that may be left unset (null in to_json).
  void add(const std::string& key, std::optional<bool>& target, const std::string& help);
  void add(const std::string& key, std::string& target, const std::string& help);
  /// A string that may be left unset (null in to_json; `--set key=` sets it to "", which is not unset).
  void add(const std::string& key, std::optional<std::string>& target, const std::string& help);
  /// A TOML array of strings, e.g. argv = ["ragmig", "train"].
  void add(const std::string& key, std::vector<std::string>& target, const std::string& help);
  /// A TOML array of integers, e.g. at_steps = [25, 75].
  void add(const std::string& key, std::vector<int64_t>& target, const std::string& help);

  /// Applies every key of a TOML file. Throws IoError (unreadable) or ConfigError (syntax, key, type).
  void load_file(const std::string& path);
  /// Applies TOML text; `source` names it in errors.
  void load_string(const std::string& toml_text, const std::string& source);
  /// Applies one `section.key=value` override; the value is read as TOML, or as a string if it is not TOML.
  void apply_override(const std::string& assignment);

  /// The current values, nested by section, e.g. {"train": {"max_steps": 100}}.
  nlohmann::json to_json() const;
  /// One line per key: name, type, default, help; grouped by section.
  std::string help_text() const;
  const std::vector<Field>& fields() const { return fields_; }

 private:
  Field* find(const std::string& key);
  /// Whether some key lies in section `name` ("train": train.lr, ...).
  bool is_section(const std::string& name) const;
  /// For an unknown key: "did you mean 'train.lr'?" (a key of that name in another section, else keys of its
  /// section a typo or two away), or "" when none is near.
  std::string suggestion(const std::string& key) const;
  void add_field(const std::string& key, Target target, const std::string& help);

  std::vector<Field> fields_;
};

}  // namespace ragmig
