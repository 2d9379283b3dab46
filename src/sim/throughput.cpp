// Reading and writing throughput tables, and the lookup with its fallbacks (see ThroughputModel in
// throughput.h for the rules and why).
#include "sim/throughput.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/atomic_file.h"
#include "core/error.h"

namespace ragmig::sim {
namespace {

// What a measured time per iteration may be: 1 ns to 31 years.
constexpr double kFewestSeconds = 1e-9, kMostSeconds = 1e9;

// Compute slices of the profile keys of one type's entries that name GPU slices, with their times.
std::vector<std::pair<int, double>> slice_points(const std::map<std::string, double>& entries) {
  std::vector<std::pair<int, double>> points;
  for (const auto& [profile, seconds] : entries)
    if (const int g = profile_compute(profile); g > 0) points.emplace_back(g, seconds);
  return points;
}

}  // namespace

int profile_compute(const std::string& profile) {
  // "<1-7>g.<n>gb" with an optional "+me"-like suffix.
  if (profile.size() < 5 || profile[0] < '1' || profile[0] > '9' || profile[1] != 'g' || profile[2] != '.') return 0;
  const size_t gb = profile.find("gb", 3);
  if (gb == std::string::npos || gb == 3) return 0;
  for (size_t i = 3; i < gb; ++i)
    if (!std::isdigit(static_cast<unsigned char>(profile[i]))) return 0;
  return profile[0] - '0';
}

SlotShape shape_of(const sched::Slot& slot) {
  SlotShape s;
  s.kind = slot.kind;
  s.profile = slot.profile;
  s.compute = slot.kind == sched::SlotKind::Gpu ? 7 : std::max(1, slot.compute);
  return s;
}

ThroughputTable parse_throughput_table(const std::string& text, const std::string& where) {
  ThroughputTable table;
  std::istringstream in(text);
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t space = line.find_first_of(" \t", first);
    if (space == std::string::npos)
      throw DataError(where, number, "expected '<job type> {\"<profile>\": <seconds per iteration>, ...}'");
    const std::string type = line.substr(first, space - first);
    const auto json = nlohmann::json::parse(line.substr(space), nullptr, /*allow_exceptions=*/false);
    if (!json.is_object() || json.empty())
      throw DataError(where, number, "job type '" + type + "': expected a JSON object of profile -> seconds");
    if (table.count(type)) throw DataError(where, number, "job type '" + type + "' listed twice");
    auto& entries = table[type];
    for (const auto& [profile, value] : json.items()) {
      // Bounded: a time of 1e300 s beside one of 1e-9 s fits an exponent whose power law prices other slots at
      // 0 s or at infinity (fuzz/fuzz_throughput.cpp found it).
      if (!value.is_number() || !(value.get<double>() >= kFewestSeconds && value.get<double>() <= kMostSeconds) ||
          profile.empty())
        throw DataError(where, number,
                        fmt::format("job type '{}': '{}' must map to seconds per iteration between {:g} and {:g}, "
                                    "got {}", type, profile, kFewestSeconds, kMostSeconds, value.dump()));
      entries[profile] = value.get<double>();
    }
  }
  return table;
}

ThroughputTable read_throughput_table(const std::string& path) { return parse_throughput_table(read_file(path), path); }

std::string format_throughput_table(const ThroughputTable& table) {
  std::string out;
  for (const auto& [type, entries] : table) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [profile, seconds] : entries) j[profile] = seconds;
    out += type + " " + j.dump() + "\n";
  }
  return out;
}

std::optional<double> fitted_exponent(const std::map<std::string, double>& entries) {
  const auto points = slice_points(entries);
  double mx = 0, my = 0;
  for (const auto& [g, t] : points) {
    mx += std::log(g);
    my += std::log(t);
  }
  if (points.empty()) return std::nullopt;
  mx /= static_cast<double>(points.size());
  my /= static_cast<double>(points.size());
  double sxy = 0, sxx = 0;
  for (const auto& [g, t] : points) {
    sxy += (std::log(g) - mx) * (std::log(t) - my);
    sxx += (std::log(g) - mx) * (std::log(g) - mx);
  }
  if (sxx <= 0) return std::nullopt;  // one slice size only
  return -sxy / sxx;
}

ThroughputModel make_throughput_model(const std::vector<ThroughputTable>& tables) {
  ThroughputModel model;
  for (const auto& t : tables)
    for (const auto& [type, entries] : t)
      for (const auto& [profile, seconds] : entries) model.table[type][profile] = seconds;
  std::vector<double> exponents;
  for (const auto& [type, entries] : model.table)
    if (const auto b = fitted_exponent(entries)) exponents.push_back(*b);
  if (!exponents.empty()) {
    std::sort(exponents.begin(), exponents.end());
    const size_t n = exponents.size();
    model.fallback_exponent = n % 2 ? exponents[n / 2] : (exponents[n / 2 - 1] + exponents[n / 2]) / 2;
  }
  return model;
}

double seconds_per_iteration(const ThroughputModel& model, const std::string& type, const SlotShape& slot) {
  const bool gpu = slot.kind != sched::SlotKind::Cpu;
  const int g = std::clamp(slot.compute, 1, 7);
  const auto it = model.table.find(type);
  if (it != model.table.end()) {
    const auto& entries = it->second;
    if (const auto e = entries.find(slot.profile); e != entries.end()) return e->second;  // 1.
    if (gpu) {
      const auto points = slice_points(entries);
      for (const auto& [size, seconds] : points)
        if (size == g) return seconds;  // 2.
      if (!points.empty()) {            // 3.
        const double b = fitted_exponent(entries).value_or(model.fallback_exponent);
        // Anchor the power law at the measured size nearest to g, so measured points stay exact.
        const auto nearest = std::min_element(points.begin(), points.end(), [&](const auto& x, const auto& y) {
          return std::abs(std::log(x.first) - std::log(g)) < std::abs(std::log(y.first) - std::log(g));
        });
        return nearest->second * std::pow(static_cast<double>(nearest->first) / g, b);
      }
    }
  }
  if (!gpu) return 1.0;  // 4.
  return std::pow(7.0 / g, model.fallback_exponent);
}

}  // namespace ragmig::sim
