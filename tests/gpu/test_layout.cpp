// MIG layouts: every enumerated layout of every model checked against an independent slice-by-slice
// reference; the A100-40GB counts (19 maximal layouts by position = NVIDIA's table, 14 profile mixes);
// spec strings that round-trip; invalid layouts refused with the rule they break.
#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "gpu/layout.h"

namespace ragmig::gpu {
namespace {

const std::vector<std::string> kA100Classic = {"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"};

// The placement rules restated slice by slice, independent of layout.cpp's bit masks.
bool reference_valid(const GpuCatalog& gpu, const Layout& layout) {
  std::vector<int> owner(static_cast<size_t>(gpu.memory_slices), 0);
  std::vector<int> per_profile(gpu.profiles.size(), 0);
  int compute = 0;
  int media = 0;
  for (const auto& p : layout) {
    const MigProfile& prof = gpu.profiles[static_cast<size_t>(p.profile)];
    bool allowed = false;
    for (int s : prof.starts) allowed = allowed || s == p.start;
    if (!allowed) return false;
    for (int m = p.start; m < p.start + prof.memory_slices; ++m) {
      if (m >= gpu.memory_slices || owner[static_cast<size_t>(m)]++ > 0) return false;
    }
    compute += prof.compute_slices;
    media += prof.media_extensions() ? 1 : 0;
    if (++per_profile[static_cast<size_t>(p.profile)] > prof.max_instances) return false;
  }
  return compute <= gpu.compute_slices && media <= 1;
}

TEST(Layout, EveryEnumeratedLayoutObeysPlacementsAndSliceLimits) {
  for (const auto& gpu : gpu_catalogs()) {
    SCOPED_TRACE(gpu.name);
    const auto all = enumerate_layouts(gpu);
    const auto maximal = enumerate_layouts(gpu, {.maximal_only = true, .profiles = {}, .base = {}});
    EXPECT_GT(all.size(), maximal.size());
    std::set<Layout> unique(all.begin(), all.end());
    EXPECT_EQ(unique.size(), all.size()) << "a layout was enumerated twice";
    for (const auto& layout : all) {
      ASSERT_TRUE(reference_valid(gpu, layout)) << to_string(gpu, layout);
      ASSERT_TRUE(is_valid_layout(gpu, layout)) << to_string(gpu, layout);
      ASSERT_LE(compute_used(gpu, layout), gpu.compute_slices);
      ASSERT_EQ(layout, canonical(layout));
    }
    // Completeness: every valid one-step extension of an enumerated layout is enumerated too.
    for (const auto& layout : all) {
      for (size_t i = 0; i < gpu.profiles.size(); ++i) {
        for (int s : gpu.profiles[i].starts) {
          Layout bigger = layout;
          bigger.push_back({static_cast<int>(i), s});
          if (reference_valid(gpu, bigger)) {
            ASSERT_TRUE(unique.count(canonical(bigger))) << to_string(gpu, bigger);
          }
        }
      }
    }
    // Maximal means exactly: no instance can be added.
    std::set<Layout> maximal_set(maximal.begin(), maximal.end());
    for (const auto& layout : all) {
      bool extendable = false;
      for (size_t i = 0; i < gpu.profiles.size(); ++i) {
        for (int s : gpu.profiles[i].starts) extendable = extendable || can_add(gpu, layout, {static_cast<int>(i), s});
      }
      EXPECT_EQ(maximal_set.count(layout) == 1, !extendable) << to_string(gpu, layout);
    }
  }
}

TEST(Layout, EnumerationKeepsTheBase) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  const Layout busy = parse_layout(h200, "3g.71gb@4");
  const auto layouts = enumerate_layouts(h200, {.maximal_only = false, .profiles = {}, .base = busy});
  ASSERT_FALSE(layouts.empty());
  for (const auto& l : layouts) {
    EXPECT_NE(std::find(l.begin(), l.end(), busy.front()), l.end()) << to_string(h200, l);
  }
  const Layout overlapping = {{h200.profile_index("4g.71gb"), 0}, {h200.profile_index("3g.71gb"), 0}};
  EXPECT_THROW(enumerate_layouts(h200, {.maximal_only = false, .profiles = {}, .base = overlapping}), ConfigError);
}

TEST(Layout, A100_40GBHas19MaximalLayoutsMatchingNvidiasTable) {
  const GpuCatalog& a100 = gpu_catalog("A100-40GB");
  const auto maximal = enumerate_layouts(a100, {.maximal_only = true, .profiles = kA100Classic, .base = {}});
  // The supported A100-40GB configurations of NVIDIA's MIG user guide, by GPU slice position.
  const std::vector<std::string> nvidia = {
      "7g.40gb@0",
      "4g.20gb@0+3g.20gb@4",
      "4g.20gb@0+2g.10gb@4+1g.5gb@6",
      "4g.20gb@0+1g.5gb@4+1g.5gb@5+1g.5gb@6",
      "3g.20gb@0+3g.20gb@4",
      "3g.20gb@0+2g.10gb@4+1g.5gb@6",
      "3g.20gb@0+1g.5gb@4+1g.5gb@5+1g.5gb@6",
      "3g.20gb@4+2g.10gb@0+2g.10gb@2",
      "3g.20gb@4+2g.10gb@0+1g.5gb@2+1g.5gb@3",
      "3g.20gb@4+2g.10gb@2+1g.5gb@0+1g.5gb@1",
      "3g.20gb@4+1g.5gb@0+1g.5gb@1+1g.5gb@2+1g.5gb@3",
      "2g.10gb@0+2g.10gb@2+2g.10gb@4+1g.5gb@6",
      "2g.10gb@0+2g.10gb@2+1g.5gb@4+1g.5gb@5+1g.5gb@6",
      "2g.10gb@0+2g.10gb@4+1g.5gb@2+1g.5gb@3+1g.5gb@6",
      "2g.10gb@2+2g.10gb@4+1g.5gb@0+1g.5gb@1+1g.5gb@6",
      "2g.10gb@0+1g.5gb@2+1g.5gb@3+1g.5gb@4+1g.5gb@5+1g.5gb@6",
      "2g.10gb@2+1g.5gb@0+1g.5gb@1+1g.5gb@4+1g.5gb@5+1g.5gb@6",
      "2g.10gb@4+1g.5gb@0+1g.5gb@1+1g.5gb@2+1g.5gb@3+1g.5gb@6",
      "1g.5gb@0+1g.5gb@1+1g.5gb@2+1g.5gb@3+1g.5gb@4+1g.5gb@5+1g.5gb@6",
  };
  std::set<std::string> expected;
  for (const auto& s : nvidia) expected.insert(to_string(a100, parse_layout(a100, s)));
  std::set<std::string> got;
  for (const auto& l : maximal) got.insert(to_string(a100, l));
  EXPECT_EQ(maximal.size(), 19u);
  EXPECT_EQ(got, expected);
}

// The 19 positions give 14 mixes, not 12: the two mixes with a 3g at slice 0 beside smaller instances
// (3+2+1 and 3+1+1+1, one compute slice idle) are in NVIDIA's table and obey every placement rule. Only
// dropping them gives 12 mixes, and then the positions number 17.
TEST(Layout, A100_40GBMaximalLayoutsHave14DistinctProfileMixes) {
  const GpuCatalog& a100 = gpu_catalog("A100-40GB");
  const auto maximal = enumerate_layouts(a100, {.maximal_only = true, .profiles = kA100Classic, .base = {}});
  std::set<std::string> mixes;
  for (const auto& l : maximal) mixes.insert(to_string(a100, mix_of(l)));
  const std::set<std::string> expected = {
      "7g.40gb",
      "4g.20gb+3g.20gb",
      "4g.20gb+2g.10gb+1g.5gb",
      "4g.20gb+1g.5gb+1g.5gb+1g.5gb",
      "2x3g.20gb",
      "3g.20gb+2g.10gb+2g.10gb",
      "3g.20gb+2g.10gb+1g.5gb",            // 3g at 0: one compute slice stays idle
      "3g.20gb+2g.10gb+1g.5gb+1g.5gb",
      "3g.20gb+1g.5gb+1g.5gb+1g.5gb",      // 3g at 0: one compute slice stays idle
      "3g.20gb+1g.5gb+1g.5gb+1g.5gb+1g.5gb",
      "2g.10gb+2g.10gb+2g.10gb+1g.5gb",
      "2g.10gb+2g.10gb+1g.5gb+1g.5gb+1g.5gb",
      "2g.10gb+1g.5gb+1g.5gb+1g.5gb+1g.5gb+1g.5gb",
      "7x1g.5gb",
  };
  EXPECT_EQ(mixes, expected);
  EXPECT_EQ(mixes.size(), 14u);
}

TEST(Layout, SpecStringsRoundTrip) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  for (const std::string s : {"", "7g.141gb@0", "3g.71gb@4+1g.18gb@0+1g.18gb@1", "1g.18gb@0+1g.18gb+me@3",
                              "4g.71gb@0+2g.35gb@4+1g.35gb@6"}) {
    EXPECT_EQ(to_string(h200, parse_layout(h200, s)), s);
  }
  for (const std::string s : {"", "7x1g.18gb", "3g.71gb+2g.35gb+1g.18gb+1g.18gb", "7g.141gb", "1g.18gb+1g.18gb+me",
                              "2x3g.71gb", "4g.71gb+3g.71gb"}) {
    EXPECT_EQ(to_string(h200, parse_mix(h200, s)), s);
  }
  // Other spellings parse to the canonical one.
  EXPECT_EQ(to_string(h200, parse_layout(h200, "1g.18gb@1+3g.71gb@4+1g.18gb@0")), "3g.71gb@4+1g.18gb@0+1g.18gb@1");
  EXPECT_EQ(to_string(h200, parse_mix(h200, "1g.18gb+3g.71gb")), "3g.71gb+1g.18gb");
  EXPECT_EQ(to_string(h200, parse_mix(h200, "3g.71gb+2x1g.18gb")), "3g.71gb+1g.18gb+1g.18gb");
  EXPECT_EQ(to_string(h200, parse_mix(h200, "1g.18gb+1g.18gb")), "2x1g.18gb");
}

struct BadLayout {
  std::string gpu;
  std::string spec;
  std::string expected;  // part of the ConfigError message
};

TEST(Layout, InvalidLayoutsNameTheRuleTheyBreak) {
  const std::vector<BadLayout> cases = {
      {"H200", "3g.71gb@1", "may start only at memory slice 0,4"},
      {"H200", "3g.71gb@0+4g.71gb@0", "overlaps"},
      {"H200", "1g.18gb@0+1g.18gb@0", "overlaps"},
      {"H200", "1g.18gb+me@0+1g.18gb+me@1", "instance(s) of 1g.18gb+me"},
      {"A30", "1g.6gb+me@0+2g.12gb+me@2", "media extensions"},
      {"H200", "1g.5gb@0", "not a MIG profile of H200-141GB"},
      {"H200", "1g.18gb", "lacks its start"},
      {"H200", "1g.18gb@x", "start memory slice"},
      {"H200", "1g.18gb@0++1g.18gb@1", "empty term"},
  };
  for (const auto& c : cases) {
    const GpuCatalog& gpu = gpu_catalog(c.gpu);
    try {
      parse_layout(gpu, c.spec);
      ADD_FAILURE() << c.spec << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << c.spec << ": " << e.what();
    }
  }
  EXPECT_THROW(parse_mix(gpu_catalog("H200"), "0x1g.18gb"), ConfigError);
  EXPECT_THROW(parse_mix(gpu_catalog("H200"), "1g.5gb"), ConfigError);
}

TEST(Layout, ComputeLimitHoldsWhereMemoryWouldAllowMore) {
  // The real catalogs' placements never exceed the compute slices on their own, so a made-up GPU with
  // more memory than compute slices checks that rule.
  GpuCatalog toy;
  toy.name = "toy";
  toy.compute_slices = 2;
  toy.memory_slices = 4;
  toy.profiles = {{"1g.1gb", 1, 0, 1, 1, 1024, 4, {0, 1, 2, 3}}};
  EXPECT_TRUE(is_valid_layout(toy, {{0, 0}, {0, 1}}));
  EXPECT_NE(layout_error(toy, {{0, 0}, {0, 1}, {0, 2}}).find("compute slices"), std::string::npos);
  const auto maximal = enumerate_layouts(toy, {.maximal_only = true, .profiles = {}, .base = {}});
  EXPECT_EQ(maximal.size(), 6u);  // any 2 of the 4 positions
  for (const auto& l : maximal) EXPECT_EQ(l.size(), 2u);
}

}  // namespace
}  // namespace ragmig::gpu
