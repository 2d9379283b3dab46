// Grid and random sampling of a search space, and the text forms of the values drawn. Randomness is
// splitmix64 of (seed, trial, param) so a trial's values never depend on how many trials there are.
#include "hpo/search_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "core/splitmix.h"

namespace ragmig::hpo {
namespace {

// 53 random bits: every double in [0, 1) this can give is exactly representable.
double uniform01(uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// Shortest text that reads back to the same double, always recognisable as a float in TOML ("3" would
// come back an integer).
std::string float_text(double x) {
  std::string s = fmt::format("{}", x);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 'n': "nan", "inf"
  return s;
}

// Four significant digits through decimal text, so the double is the one its printed form reads back to.
double round_4_digits(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  return std::strtod(fmt::format("{:.3e}", x).c_str(), nullptr);
}

std::string toml_basic_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        // TOML forbids raw control characters and DEL in basic strings; UTF-8 bytes pass as they are.
        if (c < 0x20 || c == 0x7f)
          out += fmt::format("\\u{:04X}", c);
        else
          out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// The values one param takes in a grid.
std::vector<nlohmann::json> grid_values(const Param& p) {
  if (p.kind == ParamKind::Choice) return p.choices;
  if (p.kind == ParamKind::Int) {
    std::vector<nlohmann::json> values;
    for (auto v = static_cast<int64_t>(p.low); v <= static_cast<int64_t>(p.high); ++v) {
      values.emplace_back(v);
      if (static_cast<int64_t>(values.size()) > kMaxGridSize) break;  // the size check below reports it
    }
    return values;
  }
  throw ConfigError("search = \"grid\": \"" + p.key + "\" is " + to_string(p.kind) +
                    ", which has no grid; use choice = [..] or int = [low, high], or search = \"random\"");
}

std::vector<ParamValues> sample_grid(const SearchSpace& space, int64_t trials) {
  std::vector<std::vector<nlohmann::json>> axes;
  int64_t size = 1;
  for (const Param& p : space.params) {
    axes.push_back(grid_values(p));
    size *= static_cast<int64_t>(axes.back().size());
    if (size > kMaxGridSize)
      throw ConfigError(fmt::format("search = \"grid\": the grid has more than {} combinations", kMaxGridSize));
  }
  if (trials > size)
    throw ConfigError(
        fmt::format("search = \"grid\": trials = {} but the grid has only {} combinations", trials, size));
  const int64_t n = trials == 0 ? size : trials;
  std::vector<ParamValues> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) {
    // Mixed-radix digits of t, last param least significant so that it varies fastest.
    ParamValues values(space.params.size());
    int64_t rest = t;
    for (size_t j = space.params.size(); j-- > 0;) {
      const auto radix = static_cast<int64_t>(axes[j].size());
      values[j] = {space.params[j].key, axes[j][static_cast<size_t>(rest % radix)]};
      rest /= radix;
    }
    out.push_back(std::move(values));
  }
  return out;
}

nlohmann::json draw(const Param& p, double u) {
  switch (p.kind) {
    case ParamKind::Choice: {
      const auto n = p.choices.size();
      return p.choices[std::min(static_cast<size_t>(u * static_cast<double>(n)), n - 1)];
    }
    case ParamKind::Int: {
      const auto low = static_cast<int64_t>(p.low), high = static_cast<int64_t>(p.high);
      const auto v = low + static_cast<int64_t>(std::floor(u * (p.high - p.low + 1)));
      return std::clamp(v, low, high);
    }
    case ParamKind::Uniform:
      return std::clamp(round_4_digits(p.low + u * (p.high - p.low)), p.low, p.high);
    case ParamKind::LogUniform: {
      const double lo = std::log(p.low), hi = std::log(p.high);
      return std::clamp(round_4_digits(std::exp(lo + u * (hi - lo))), p.low, p.high);
    }
  }
  return nullptr;
}

}  // namespace

std::string to_string(ParamKind kind) {
  switch (kind) {
    case ParamKind::Choice:
      return "choice";
    case ParamKind::Uniform:
      return "uniform";
    case ParamKind::LogUniform:
      return "log_uniform";
    case ParamKind::Int:
      return "int";
  }
  return "?";
}

std::string to_string(SearchKind kind) {
  return kind == SearchKind::Grid ? "grid" : "random";
}

SearchKind parse_search_kind(const std::string& text) {
  if (text == "grid") return SearchKind::Grid;
  if (text == "random") return SearchKind::Random;
  throw ConfigError("search: expected \"grid\" or \"random\", got \"" + text + "\"");
}

std::string to_override(const std::string& key, const nlohmann::json& value) {
  if (value.is_string()) return key + "=" + toml_basic_string(value.get<std::string>());
  if (value.is_number_float()) return key + "=" + float_text(value.get<double>());
  return key + "=" + value_text(value);
}

nlohmann::json to_json(const ParamValues& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : values) out[key] = value;
  return out;
}

std::string value_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());  // unsigned fits: from TOML
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  return value.dump();
}

std::vector<ParamValues> sample(const SearchSpace& space, SearchKind kind, int64_t trials, uint64_t seed) {
  if (trials < 0) throw ConfigError(fmt::format("trials: expected a non-negative integer, got {}", trials));
  if (kind == SearchKind::Grid) return sample_grid(space, trials);
  if (trials < 1) throw ConfigError("search = \"random\" needs trials >= 1");
  std::vector<ParamValues> out;
  out.reserve(static_cast<size_t>(trials));
  const uint64_t s = splitmix64(seed);
  for (int64_t i = 0; i < trials; ++i) {
    const uint64_t t = splitmix64(s ^ static_cast<uint64_t>(i));
    ParamValues values;
    for (size_t j = 0; j < space.params.size(); ++j) {
      const double u = uniform01(splitmix64(t ^ static_cast<uint64_t>(j)));
      values.emplace_back(space.params[j].key, draw(space.params[j], u));
    }
    out.push_back(std::move(values));
  }
  return out;
}

}  // namespace ragmig::hpo
