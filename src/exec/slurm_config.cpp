// The [slurm] table (see slurm_config.h).
#include "exec/slurm_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/toml_names.h"

namespace ragmig::exec {
namespace {

// One word for sbatch: not empty, no blanks, control characters or DEL.
bool one_word(std::string_view text) {
  return !text.empty() && std::none_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) <= ' ' || c == '\x7f';
  });
}

bool sbatch_option(std::string_view text) { return text.starts_with("--") && one_word(text); }

}  // namespace

SlurmOptions merge_slurm_table(const std::string& text, const std::string& source, SlurmOptions options) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}:{}: {}", source, e.source().begin.line, e.source().begin.column, e.description()));
  }
  const toml::node* node = root.get("slurm");
  if (!node) return options;
  const toml::table* table = node->as_table();
  if (!table) throw ConfigError(fmt::format("{}: slurm: expected a table [slurm] (got {})", source, toml_type_name(*node)));
  std::vector<std::string> file_sbatch;
  for (auto&& [k, v] : *table) {
    const std::string key(k.str());
    const auto fail = [&](const std::string& what) {
      return ConfigError(fmt::format("{}:{}: [slurm] {}: {}", source, v.source().begin.line, key, what));
    };
    std::string* field = key == "partition" ? &options.partition
                         : key == "account" ? &options.account
                         : key == "qos"     ? &options.qos
                         : key == "time"    ? &options.time_limit
                                            : nullptr;
    if (field) {
      if (!v.is_string()) throw fail(fmt::format("expected a string (got {})", toml_type_name(v)));
      if (!one_word(*v.value<std::string>())) throw fail("expected one word, without blanks or control characters");
      if (field->empty()) *field = *v.value<std::string>();
    } else if (key == "sbatch") {
      const toml::array* list = v.as_array();
      if (!list) throw fail(fmt::format("expected a list of sbatch options (got {})", toml_type_name(v)));
      for (const auto& item : *list) {
        if (!item.is_string() || !sbatch_option(*item.value<std::string>()))
          throw fail("expected options like \"--constraint=h200\", one word each");
        file_sbatch.push_back(*item.value<std::string>());
      }
    } else if (key == "array_limit") {
      if (!v.is_integer()) throw fail(fmt::format("expected a whole number >= 0 (got {})", toml_type_name(v)));
      const int64_t limit = *v.value<int64_t>();
      if (limit < 0 || limit > 1000000) throw fail(fmt::format("expected a whole number from 0 to 1000000 (got {})", limit));
      if (options.array_limit == 0) options.array_limit = static_cast<int>(limit);
    } else {
      throw fail("unknown key (expected partition, account, qos, time, sbatch, array_limit)");
    }
  }
  file_sbatch.insert(file_sbatch.end(), options.sbatch_options.begin(), options.sbatch_options.end());
  options.sbatch_options = std::move(file_sbatch);
  return options;
}

void check_slurm_options(const SlurmOptions& options) {
  const std::pair<const char*, const std::string*> words[] = {{"--partition", &options.partition},
                                                              {"--account", &options.account},
                                                              {"--qos", &options.qos},
                                                              {"--time", &options.time_limit}};
  for (const auto& [name, value] : words)
    if (!value->empty() && !one_word(*value))
      throw ConfigError(fmt::format("{} '{}': expected one word, without blanks or control characters", name, *value));
  for (const std::string& o : options.sbatch_options)
    if (!sbatch_option(o))
      throw ConfigError(fmt::format("--sbatch '{}': expected an sbatch option as one word, like --constraint=h200", o));
}

}  // namespace ragmig::exec
