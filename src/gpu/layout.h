// MIG layouts: which GPU instances (profile, start memory slice) a GPU is cut into. Validity against the
// catalog's placement rules, the two spec strings (positioned "3g.71gb@4+1g.18gb@0", and profile mixes
// "3g.71gb+1g.18gb" or "7x1g.18gb"), and enumeration of every valid or every maximal layout.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/mig_catalog.h"

namespace ragmig::gpu {

/// One GPU instance: a profile (index into GpuCatalog::profiles) placed at a start memory slice.
struct Placement {
  int profile = 0;
  int start = 0;
  auto operator<=>(const Placement&) const = default;
};

/// The GPU instances of one GPU. Canonical order: catalog order (largest profile first), then start.
using Layout = std::vector<Placement>;

/// Why `layout` breaks the placement rules of `gpu` ("" when it is valid): unknown profile, start not
/// allowed, overlapping memory slices, more compute slices than the GPU has, too many of one profile,
/// or more than one instance with media extensions.
std::string layout_error(const GpuCatalog& gpu, const Layout& layout);
inline bool is_valid_layout(const GpuCatalog& gpu, const Layout& layout) { return layout_error(gpu, layout).empty(); }
/// Whether `p` can join the valid layout `layout`.
bool can_add(const GpuCatalog& gpu, const Layout& layout, const Placement& p);

/// Bit i set when memory slice i is taken.
uint32_t memory_mask(const GpuCatalog& gpu, const Layout& layout);
int compute_used(const GpuCatalog& gpu, const Layout& layout);
/// The layout in canonical order.
Layout canonical(Layout layout);

/// "1g.18gb@0": one placement.
std::string to_string(const GpuCatalog& gpu, const Placement& p);
/// Positioned spec, canonical order: "3g.71gb@4+1g.18gb@0+1g.18gb@1"; "" for no instances.
std::string to_string(const GpuCatalog& gpu, const Layout& layout);
/// Parses a positioned spec (any order; "" is the empty layout). Throws ConfigError on syntax, unknown
/// profiles or broken placement rules.
Layout parse_layout(const GpuCatalog& gpu, std::string_view spec);
/// Parses "1g.18gb@0"; throws ConfigError when the profile is unknown or may not start there.
Placement parse_placement(const GpuCatalog& gpu, std::string_view spec);

/// A multiset of profiles (indexes into GpuCatalog::profiles), sorted: what a layout is when positions
/// do not matter.
using ProfileMix = std::vector<int>;
ProfileMix mix_of(const Layout& layout);
/// "3g.71gb+2g.35gb+1g.18gb+1g.18gb"; a mix of one profile only is written "7x1g.18gb"; "" when empty.
std::string to_string(const GpuCatalog& gpu, const ProfileMix& mix);
/// Parses a mix, accepting "Nx" on any term ("3g.71gb+4x1g.18gb"). Throws ConfigError.
ProfileMix parse_mix(const GpuCatalog& gpu, std::string_view spec);

struct EnumerateOptions {
  bool maximal_only = false;          ///< only layouts to which no further instance can be added
  std::vector<std::string> profiles;  ///< profiles that may be used (empty: all of the catalog)
  Layout base;                        ///< instances every layout keeps (e.g. busy ones); must be valid
};

/// Every valid layout of `gpu` that contains `base`, each once, in canonical order.
std::vector<Layout> enumerate_layouts(const GpuCatalog& gpu, const EnumerateOptions& options = {});

}  // namespace ragmig::gpu
