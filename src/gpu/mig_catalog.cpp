// The catalog's data and lookups. Ids, placements and limits are NVIDIA's (`nvidia-smi mig -lgip` / -lgipp
// and the MIG user guide); memory sizes are rounded usable sizes, good enough to match a job's memory need
// to a profile. On a real GPU the applier asks NVML for the exact profile, so a drift here cannot harm it.
#include "gpu/mig_catalog.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <regex>

#include "core/error.h"
#include "core/strings.h"
#include "gpu/join.h"
#include "gpu/nvml_api.h"

namespace ragmig::gpu {
namespace {

// A run of decimal digits as an int; nullopt when it does not fit ("99999999999gb" is no GPU's memory).
std::optional<int> digits_value(std::string_view digits) {
  if (const auto value = whole_number(digits, 0, std::numeric_limits<int>::max())) return static_cast<int>(*value);
  return std::nullopt;
}

struct Sizes {  // memory of each profile of a 7-compute/8-memory-slice GPU, largest profile first
  int64_t g7, g4, g3, g2, g1_double, g1;
};

// The seven profiles every 7/8-slice GPU offers (A100, H100, H200), named after its memory sizes.
GpuCatalog seven_slice_gpu(const std::string& family, int memory_gb, const std::vector<std::string>& names,
                           const Sizes& mib) {
  using namespace nvml;
  GpuCatalog gpu;
  gpu.family = family;
  gpu.memory_gb = memory_gb;
  gpu.name = family + "-" + std::to_string(memory_gb) + "GB";
  gpu.compute_slices = 7;
  gpu.memory_slices = 8;
  // name, id, nvml index, compute, memory slices, MiB, max instances, starts
  gpu.profiles = {
      {names[0], 0, kGpuInstanceProfile7Slice, 7, 8, mib.g7, 1, {0}},
      {names[1], 5, kGpuInstanceProfile4Slice, 4, 4, mib.g4, 1, {0}},
      {names[2], 9, kGpuInstanceProfile3Slice, 3, 4, mib.g3, 2, {0, 4}},
      {names[3], 14, kGpuInstanceProfile2Slice, 2, 2, mib.g2, 3, {0, 2, 4}},
      {names[4], 15, kGpuInstanceProfile1SliceRev2, 1, 2, mib.g1_double, 4, {0, 2, 4, 6}},
      {names[5], 19, kGpuInstanceProfile1Slice, 1, 1, mib.g1, 7, {0, 1, 2, 3, 4, 5, 6}},
      {names[5] + "+me", 20, kGpuInstanceProfile1SliceRev1, 1, 1, mib.g1, 1, {0, 1, 2, 3, 4, 5, 6}},
  };
  return gpu;
}

// The A30 has 4 compute and 4 memory slices and its own profile ids.
GpuCatalog a30() {
  using namespace nvml;
  GpuCatalog gpu;
  gpu.family = "A30";
  gpu.memory_gb = 24;
  gpu.name = "A30-24GB";
  gpu.compute_slices = 4;
  gpu.memory_slices = 4;
  gpu.profiles = {
      {"4g.24gb", 0, kGpuInstanceProfile4Slice, 4, 4, 24192, 1, {0}},
      {"2g.12gb", 5, kGpuInstanceProfile2Slice, 2, 2, 12032, 2, {0, 2}},
      {"2g.12gb+me", 6, kGpuInstanceProfile2SliceRev1, 2, 2, 12032, 1, {0, 2}},
      {"1g.6gb", 14, kGpuInstanceProfile1Slice, 1, 1, 5952, 4, {0, 1, 2, 3}},
      {"1g.6gb+me", 21, kGpuInstanceProfile1SliceRev1, 1, 1, 5952, 1, {0, 1, 2, 3}},
  };
  return gpu;
}

std::vector<GpuCatalog> build_catalogs() {
  return {
      a30(),
      seven_slice_gpu("A100", 40, {"7g.40gb", "4g.20gb", "3g.20gb", "2g.10gb", "1g.10gb", "1g.5gb"},
                      {40192, 19968, 19968, 9856, 9856, 4864}),
      seven_slice_gpu("A100", 80, {"7g.80gb", "4g.40gb", "3g.40gb", "2g.20gb", "1g.20gb", "1g.10gb"},
                      {80896, 40192, 40192, 19968, 19968, 9856}),
      seven_slice_gpu("H100", 80, {"7g.80gb", "4g.40gb", "3g.40gb", "2g.20gb", "1g.20gb", "1g.10gb"},
                      {81152, 40448, 40448, 20096, 20096, 9984}),
      seven_slice_gpu("H200", 141, {"7g.141gb", "4g.71gb", "3g.71gb", "2g.35gb", "1g.35gb", "1g.18gb"},
                      {140288, 66560, 66560, 33024, 33024, 16384}),
  };
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// True when `token` occurs in `text` with no letter or digit right before or after it, so that "H100"
// matches "NVIDIA H100 PCIe" but not "GH100".
bool has_token(const std::string& text, const std::string& token) {
  for (size_t pos = text.find(token); pos != std::string::npos; pos = text.find(token, pos + 1)) {
    const bool left_ok = pos == 0 || !std::isalnum(static_cast<unsigned char>(text[pos - 1]));
    const size_t end = pos + token.size();
    const bool right_ok = end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end]));
    if (left_ok && right_ok) return true;
  }
  return false;
}

}  // namespace

bool MigProfile::media_extensions() const { return name.size() > 3 && name.ends_with("+me"); }

const MigProfile* GpuCatalog::find_profile(std::string_view wanted) const {
  for (const auto& p : profiles) {
    if (p.name == wanted) return &p;
  }
  return nullptr;
}

int GpuCatalog::profile_index(std::string_view wanted) const {
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (profiles[i].name == wanted) return static_cast<int>(i);
  }
  throw ConfigError("'" + std::string(wanted) + "' is not a MIG profile of " + name + " (its profiles: " +
                    profile_names() + ")");
}

int GpuCatalog::profile_index_by_id(int id) const {
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (profiles[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

std::string GpuCatalog::profile_names() const {
  return join(profiles, ", ", [](const MigProfile& p) { return p.name; });
}

const std::vector<GpuCatalog>& gpu_catalogs() {
  static const std::vector<GpuCatalog> catalogs = build_catalogs();
  return catalogs;
}

const GpuCatalog* find_gpu_catalog(std::string_view gpu_name, int64_t total_memory_mib) {
  const std::string name = upper(gpu_name);
  std::vector<const GpuCatalog*> family;
  for (const auto& c : gpu_catalogs()) {
    if (has_token(name, c.family)) family.push_back(&c);
  }
  if (family.empty()) return nullptr;

  static const std::regex gb_re("([0-9]+) ?GB");
  std::smatch m;
  if (std::regex_search(name, m, gb_re)) {
    const std::optional<int> gb = digits_value(m[1].str());
    for (const auto* c : family) {
      if (gb == c->memory_gb) return c;
    }
    return nullptr;  // e.g. H100 94GB: a different profile table that the catalog does not hold
  }
  if (total_memory_mib > 0) {
    // NVML's total is a little under the product size; within 15% tells 40 from 80 and 80 from 94.
    const double gib = static_cast<double>(total_memory_mib) / 1024.0;
    for (const auto* c : family) {
      if (std::abs(gib - c->memory_gb) <= 0.15 * c->memory_gb) return c;
    }
    return nullptr;
  }
  return family.size() == 1 ? family.front() : nullptr;
}

const GpuCatalog& gpu_catalog(std::string_view gpu_name, int64_t total_memory_mib) {
  if (const GpuCatalog* c = find_gpu_catalog(gpu_name, total_memory_mib)) return *c;
  const std::string known = join(gpu_catalogs(), ", ", [](const GpuCatalog& c) { return c.name; });
  throw ConfigError("no MIG profile catalog for GPU '" + std::string(gpu_name) +
                    "' (unknown or ambiguous model; known: " + known + ")");
}

bool looks_like_profile_name(std::string_view text) {
  static const std::regex re("[1-7]g\\.[1-9][0-9]*gb(\\+me)?");  // a GPU has 7 compute slices at most
  return std::regex_match(text.begin(), text.end(), re);
}

ProfileName parse_profile_name(std::string_view text) {
  if (!looks_like_profile_name(text)) {
    throw ConfigError("'" + std::string(text) + "' is not a MIG profile name (expected <1-7>g.<memory>gb or "
                      "<1-7>g.<memory>gb+me, e.g. 1g.18gb)");
  }
  ProfileName p;
  const size_t g = text.find('g');
  const size_t gb = text.find("gb");
  const std::optional<int> memory = digits_value(text.substr(g + 2, gb - g - 2));
  if (!memory) throw ConfigError("'" + std::string(text) + "': no MIG profile has that much memory");
  p.compute_slices = text[0] - '0';  // one digit, 1-7
  p.memory_gb = *memory;
  p.media_extensions = text.ends_with("+me");
  return p;
}

std::string to_string(const ProfileName& name) {
  return std::to_string(name.compute_slices) + "g." + std::to_string(name.memory_gb) + "gb" +
         (name.media_extensions ? "+me" : "");
}

}  // namespace ragmig::gpu
