// Placement rules, spec strings and enumeration of MIG layouts. Enumeration is a depth-first search over
// (profile, start) candidates in a fixed order, each candidate considered after the previous one only, so
// every set of instances is produced exactly once.
#include "gpu/layout.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <limits>
#include <set>

#include "core/error.h"
#include "core/strings.h"
#include "gpu/join.h"

namespace ragmig::gpu {
namespace {

uint32_t slice_bits(int start, int size) { return ((uint32_t{1} << size) - 1u) << start; }

// Splits a spec on '+', gluing a "+me" suffix back onto the profile it belongs to ("1g.18gb+me@3").
std::vector<std::string> split_terms(std::string_view spec) {
  std::vector<std::string> terms;
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t end = spec.find('+', begin);
    if (end == std::string_view::npos) end = spec.size();
    std::string term(spec.substr(begin, end - begin));
    if (!terms.empty() && (term == "me" || term.starts_with("me@"))) {
      terms.back() += "+" + term;
    } else {
      terms.push_back(term);
    }
    begin = end + 1;
  }
  return terms;
}

int parse_small_int(std::string_view text, const std::string& what) {
  if (const auto value = whole_number(text, 0, std::numeric_limits<int>::max())) return static_cast<int>(*value);
  throw ConfigError("'" + std::string(text) + "' is not a valid " + what);
}

}  // namespace

uint32_t memory_mask(const GpuCatalog& gpu, const Layout& layout) {
  uint32_t mask = 0;
  for (const auto& p : layout) mask |= slice_bits(p.start, gpu.profiles[static_cast<size_t>(p.profile)].memory_slices);
  return mask;
}

int compute_used(const GpuCatalog& gpu, const Layout& layout) {
  int sum = 0;
  for (const auto& p : layout) sum += gpu.profiles[static_cast<size_t>(p.profile)].compute_slices;
  return sum;
}

std::string layout_error(const GpuCatalog& gpu, const Layout& layout) {
  uint32_t used = 0;
  int compute = 0;
  int media = 0;
  std::vector<int> count(gpu.profiles.size(), 0);
  for (const auto& p : layout) {
    if (p.profile < 0 || p.profile >= static_cast<int>(gpu.profiles.size())) {
      return "profile index " + std::to_string(p.profile) + " is not in the catalog of " + gpu.name;
    }
    const MigProfile& prof = gpu.profiles[static_cast<size_t>(p.profile)];
    const std::string where = to_string(gpu, p);
    if (std::find(prof.starts.begin(), prof.starts.end(), p.start) == prof.starts.end()) {
      const std::string allowed = join(prof.starts, ",", [](int s) { return std::to_string(s); });
      return where + ": " + prof.name + " may start only at memory slice " + allowed;
    }
    const uint32_t bits = slice_bits(p.start, prof.memory_slices);
    if (used & bits) return where + " overlaps the memory slices of another instance";
    used |= bits;
    compute += prof.compute_slices;
    if (++count[static_cast<size_t>(p.profile)] > prof.max_instances) {
      return "more than " + std::to_string(prof.max_instances) + " instance(s) of " + prof.name;
    }
    if (prof.media_extensions() && ++media > 1) return "more than one instance with media extensions (+me)";
  }
  if (compute > gpu.compute_slices) {
    return "the instances need " + std::to_string(compute) + " compute slices; " + gpu.name + " has " +
           std::to_string(gpu.compute_slices);
  }
  return "";
}

bool can_add(const GpuCatalog& gpu, const Layout& layout, const Placement& p) {
  const MigProfile& prof = gpu.profiles[static_cast<size_t>(p.profile)];
  if (std::find(prof.starts.begin(), prof.starts.end(), p.start) == prof.starts.end()) return false;
  if (memory_mask(gpu, layout) & slice_bits(p.start, prof.memory_slices)) return false;
  if (compute_used(gpu, layout) + prof.compute_slices > gpu.compute_slices) return false;
  int same = 0;
  int media = 0;
  for (const auto& q : layout) {
    same += q.profile == p.profile;
    media += gpu.profiles[static_cast<size_t>(q.profile)].media_extensions();
  }
  if (same >= prof.max_instances) return false;
  return !(prof.media_extensions() && media > 0);
}

Layout canonical(Layout layout) {
  std::sort(layout.begin(), layout.end());
  return layout;
}

std::string to_string(const GpuCatalog& gpu, const Placement& p) {
  const bool known = p.profile >= 0 && p.profile < static_cast<int>(gpu.profiles.size());
  return (known ? gpu.profiles[static_cast<size_t>(p.profile)].name : "profile#" + std::to_string(p.profile)) + "@" +
         std::to_string(p.start);
}

std::string to_string(const GpuCatalog& gpu, const Layout& layout) {
  return join(canonical(layout), "+", [&](const Placement& p) { return to_string(gpu, p); });
}

Placement parse_placement(const GpuCatalog& gpu, std::string_view spec) {
  const size_t at = spec.find('@');
  if (at == std::string_view::npos) {
    throw ConfigError("'" + std::string(spec) + "' lacks its start memory slice (write PROFILE@START, e.g. 1g.18gb@0)");
  }
  Placement p;
  p.profile = gpu.profile_index(spec.substr(0, at));
  p.start = parse_small_int(spec.substr(at + 1), "start memory slice in '" + std::string(spec) + "'");
  if (std::string why = layout_error(gpu, {p}); !why.empty()) throw ConfigError(why);
  return p;
}

Layout parse_layout(const GpuCatalog& gpu, std::string_view spec) {
  Layout layout;
  if (spec.empty()) return layout;
  for (const auto& term : split_terms(spec)) {
    if (term.empty()) throw ConfigError("empty term in layout '" + std::string(spec) + "'");
    layout.push_back(parse_placement(gpu, term));
  }
  if (std::string why = layout_error(gpu, layout); !why.empty()) {
    throw ConfigError("layout '" + std::string(spec) + "' is not valid on " + gpu.name + ": " + why);
  }
  return canonical(std::move(layout));
}

ProfileMix mix_of(const Layout& layout) {
  ProfileMix mix;
  for (const auto& p : layout) mix.push_back(p.profile);
  std::sort(mix.begin(), mix.end());
  return mix;
}

std::string to_string(const GpuCatalog& gpu, const ProfileMix& mix_in) {
  ProfileMix mix = mix_in;
  std::sort(mix.begin(), mix.end());
  if (mix.empty()) return "";
  const auto name = [&](int i) { return gpu.profiles[static_cast<size_t>(i)].name; };
  if (mix.size() > 1 && std::all_of(mix.begin(), mix.end(), [&](int i) { return i == mix.front(); })) {
    return std::to_string(mix.size()) + "x" + name(mix.front());
  }
  return join(mix, "+", name);
}

ProfileMix parse_mix(const GpuCatalog& gpu, std::string_view spec) {
  ProfileMix mix;
  if (spec.empty()) return mix;
  for (const auto& term : split_terms(spec)) {
    if (term.empty()) throw ConfigError("empty term in profile mix '" + std::string(spec) + "'");
    int repeat = 1;
    std::string_view name = term;
    if (const size_t x = term.find('x'); x != std::string::npos && x > 0 && std::isdigit(static_cast<unsigned char>(term[0]))) {
      repeat = parse_small_int(std::string_view(term).substr(0, x), "repeat count in '" + term + "'");
      if (repeat < 1) throw ConfigError("repeat count in '" + term + "' must be at least 1");
      name = std::string_view(term).substr(x + 1);
    }
    const int index = gpu.profile_index(name);
    mix.insert(mix.end(), static_cast<size_t>(repeat), index);
  }
  std::sort(mix.begin(), mix.end());
  return mix;
}

std::vector<Layout> enumerate_layouts(const GpuCatalog& gpu, const EnumerateOptions& options) {
  if (std::string why = layout_error(gpu, options.base); !why.empty()) {
    throw ConfigError("the instances to keep do not form a valid layout: " + why);
  }
  std::set<int> allowed;
  for (const auto& name : options.profiles) allowed.insert(gpu.profile_index(name));
  std::vector<Placement> candidates;
  for (size_t i = 0; i < gpu.profiles.size(); ++i) {
    if (!allowed.empty() && !allowed.count(static_cast<int>(i))) continue;
    for (int s : gpu.profiles[i].starts) candidates.push_back({static_cast<int>(i), s});
  }

  std::vector<Layout> out;
  Layout current = options.base;
  // Depth-first: candidates are tried in order and each branch only looks at later ones, so a set of
  // instances is reached along one path only.
  auto visit = [&](auto&& self, size_t first) -> void {
    bool extended = false;
    for (size_t j = 0; j < candidates.size(); ++j) {
      if (!can_add(gpu, current, candidates[j])) continue;
      extended = true;
      if (j < first) continue;
      current.push_back(candidates[j]);
      self(self, j + 1);
      current.pop_back();
    }
    if (!options.maximal_only || !extended) out.push_back(canonical(current));
  };
  visit(visit, 0);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ragmig::gpu
