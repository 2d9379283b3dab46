// Search spaces of `ragmig batch`: the parameters a sweep varies, and the grid or seeded random trials
// drawn from them. Values leave as `--set` overrides of `ragmig train`, so they must round-trip through TOML.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ragmig::hpo {

enum class ParamKind { Choice, Uniform, LogUniform, Int };

std::string to_string(ParamKind kind);  // "choice" | "uniform" | "log_uniform" | "int"

struct Param {
  std::string key;  ///< a `ragmig train` config key, e.g. "train.lr"
  ParamKind kind = ParamKind::Choice;
  std::vector<nlohmann::json> choices;  ///< Choice: numbers, strings or booleans (not arrays/tables)
  /// Uniform: [low, high); LogUniform: [low, high), 0 < low; Int: low..high inclusive, integral.
  double low = 0, high = 0;
};

/// Sorted by key, so that the trials do not depend on the order of the TOML file.
struct SearchSpace {
  std::vector<Param> params;
};

/// One trial's values, sorted by key.
using ParamValues = std::vector<std::pair<std::string, nlohmann::json>>;

enum class SearchKind { Grid, Random };

std::string to_string(SearchKind kind);  // "grid" | "random"
/// Throws ConfigError for anything but "grid" and "random".
SearchKind parse_search_kind(const std::string& text);

/// "train.lr=0.0007343", "model.pooling=\"cls\"" (strings as escaped TOML basic strings), "x=true", integers
/// without a decimal point, floats always with one (or an exponent): what `ragmig train --set` reads back to
/// the same value.
std::string to_override(const std::string& key, const nlohmann::json& value);
/// Human form for reports: "0.0007343", "cls", "true", "32".
std::string value_text(const nlohmann::json& value);
/// {"train.lr": 0.0007343, ...}: a trial's values as one JSON object (results.json, sweep.json).
nlohmann::json to_json(const ParamValues& values);

/// The largest grid `sample` enumerates; a bigger one is a ConfigError (it is a mistake, not a sweep).
inline constexpr int64_t kMaxGridSize = 100000;

/// Grid: cartesian product of every param (Choice: its choices; Int: low..high), last key varying fastest;
/// Uniform or LogUniform in a grid is a ConfigError naming the key. trials = 0 takes all combinations,
/// trials > 0 the first `trials` (a ConfigError if more than the grid holds).
/// Random: trials >= 1. Trial i's value of param j comes from
///   u = uniform01(splitmix64(splitmix64(splitmix64(seed) ^ i) ^ j))
/// so trial i is the same whatever the number of trials. Uniform: low + u (high - low); LogUniform:
/// exp(log low + u (log high - log low)); Int: low + floor(u (high - low + 1)); Choice: choices[floor(u n)].
/// Continuous draws are rounded to 4 significant digits and clamped into [low, high].
std::vector<ParamValues> sample(const SearchSpace& space, SearchKind kind, int64_t trials, uint64_t seed);

}  // namespace ragmig::hpo
