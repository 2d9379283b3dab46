// Demand strings and the rule that matches a job to a MIG profile.
#include "gpu/demand.h"

#include <limits>

#include "core/error.h"
#include "core/strings.h"
#include "gpu/mig_catalog.h"
#include "gpu/join.h"

namespace ragmig::gpu {
namespace {

// A decimal integer in [least, most]; ConfigError naming the term otherwise.
int64_t parse_int(std::string_view text, const std::string& term, const char* what, int64_t least, int64_t most) {
  if (const auto value = whole_number(text, least, most)) return *value;
  throw ConfigError("demand term '" + term + "': the " + what + " must be a whole number from " +
                    std::to_string(least) + " to " + std::to_string(most) + ", got '" + std::string(text) + "'");
}

constexpr int64_t kMostMemoryMib = int64_t{1} << 30;  // 1 PiB: no job's slice is near it, and GiB * 1024 fits

}  // namespace

std::vector<Demand> parse_demands(std::string_view spec) {
  std::vector<Demand> out;
  if (spec.empty()) throw ConfigError("empty demand (expected e.g. 1g.18gb:5,3g.71gb:1)");
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t end = spec.find(',', begin);
    if (end == std::string_view::npos) end = spec.size();
    const std::string term(spec.substr(begin, end - begin));
    begin = end + 1;
    if (term.empty()) throw ConfigError("empty term in demand '" + std::string(spec) + "'");

    Demand d;
    std::string_view rest = term;
    if (const size_t at = rest.find('@'); at != std::string_view::npos) {
      constexpr int64_t least = std::numeric_limits<int>::min(), most = std::numeric_limits<int>::max();
      d.priority = static_cast<int>(parse_int(rest.substr(at + 1), term, "priority", least, most));
      rest = rest.substr(0, at);
    }
    if (const size_t colon = rest.find(':'); colon != std::string_view::npos) {
      d.count = static_cast<int>(parse_int(rest.substr(colon + 1), term, "job count", 1, 1'000'000));
      rest = rest.substr(0, colon);
    }
    if (rest.ends_with("GiB") || rest.ends_with("MiB")) {
      const bool gib = rest.ends_with("GiB");
      const int64_t n = parse_int(rest.substr(0, rest.size() - 3), term,
                                  gib ? "memory size in GiB" : "memory size in MiB", 1,
                                  gib ? kMostMemoryMib / 1024 : kMostMemoryMib);
      d.memory_mib = gib ? n * 1024 : n;
    } else if (looks_like_profile_name(rest)) {
      d.profile = std::string(rest);
    } else {
      throw ConfigError("demand term '" + term + "': '" + std::string(rest) +
                        "' is neither a MIG profile (e.g. 1g.18gb) nor a memory size (e.g. 20GiB)");
    }
    out.push_back(d);
  }
  return out;
}

std::string what_of(const Demand& d) {
  if (!d.profile.empty()) return d.profile;
  if (d.memory_mib % 1024 == 0) return std::to_string(d.memory_mib / 1024) + "GiB";
  return std::to_string(d.memory_mib) + "MiB";
}

std::string to_string(const Demand& d) {
  std::string out = what_of(d) + ":" + std::to_string(d.count);
  if (d.priority != 0) out.append("@").append(std::to_string(d.priority));
  return out;
}

std::string to_string(const std::vector<Demand>& demands) {
  return join(demands, ",", [](const Demand& d) { return to_string(d); });
}

bool fits(const Demand& demand, const MigProfile& profile) {
  if (!demand.profile.empty()) return demand.profile == profile.name;
  return profile.memory_mib >= demand.memory_mib;
}

}  // namespace ragmig::gpu
