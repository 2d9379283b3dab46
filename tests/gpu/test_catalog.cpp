// The MIG catalog against NVIDIA's tables: H200 profiles and placements as the issue lists them, A100 ids,
// structural rules for every model, lookups by device name, and profile-name specs that round-trip.
#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "gpu/mig_catalog.h"

namespace ragmig::gpu {
namespace {

struct ProfileRow {
  std::string name;
  int id;
  int compute;
  int memory_slices;
  int max_instances;
  std::vector<int> starts;
};

void expect_profiles(const GpuCatalog& gpu, const std::vector<ProfileRow>& rows) {
  ASSERT_EQ(gpu.profiles.size(), rows.size()) << gpu.name;
  for (const auto& row : rows) {
    SCOPED_TRACE(gpu.name + " " + row.name);
    const MigProfile* p = gpu.find_profile(row.name);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->id, row.id);
    EXPECT_EQ(p->compute_slices, row.compute);
    EXPECT_EQ(p->memory_slices, row.memory_slices);
    EXPECT_EQ(p->max_instances, row.max_instances);
    EXPECT_EQ(p->starts, row.starts);
  }
}

TEST(Catalog, H200MatchesTheIssueTable) {
  expect_profiles(gpu_catalog("H200-141GB"), {
                                                 {"1g.18gb", 19, 1, 1, 7, {0, 1, 2, 3, 4, 5, 6}},
                                                 {"1g.18gb+me", 20, 1, 1, 1, {0, 1, 2, 3, 4, 5, 6}},
                                                 {"1g.35gb", 15, 1, 2, 4, {0, 2, 4, 6}},
                                                 {"2g.35gb", 14, 2, 2, 3, {0, 2, 4}},
                                                 {"3g.71gb", 9, 3, 4, 2, {0, 4}},
                                                 {"4g.71gb", 5, 4, 4, 1, {0}},
                                                 {"7g.141gb", 0, 7, 8, 1, {0}},
                                             });
}

TEST(Catalog, A100_40GBUsesNvidiaProfileIds) {
  expect_profiles(gpu_catalog("A100-40GB"), {
                                                {"1g.5gb", 19, 1, 1, 7, {0, 1, 2, 3, 4, 5, 6}},
                                                {"1g.5gb+me", 20, 1, 1, 1, {0, 1, 2, 3, 4, 5, 6}},
                                                {"1g.10gb", 15, 1, 2, 4, {0, 2, 4, 6}},
                                                {"2g.10gb", 14, 2, 2, 3, {0, 2, 4}},
                                                {"3g.20gb", 9, 3, 4, 2, {0, 4}},
                                                {"4g.20gb", 5, 4, 4, 1, {0}},
                                                {"7g.40gb", 0, 7, 8, 1, {0}},
                                            });
}

TEST(Catalog, A30HasFourSlicesOfEach) {
  const GpuCatalog& a30 = gpu_catalog("NVIDIA A30");
  EXPECT_EQ(a30.compute_slices, 4);
  EXPECT_EQ(a30.memory_slices, 4);
  expect_profiles(a30, {
                           {"1g.6gb", 14, 1, 1, 4, {0, 1, 2, 3}},
                           {"1g.6gb+me", 21, 1, 1, 1, {0, 1, 2, 3}},
                           {"2g.12gb", 5, 2, 2, 2, {0, 2}},
                           {"2g.12gb+me", 6, 2, 2, 1, {0, 2}},
                           {"4g.24gb", 0, 4, 4, 1, {0}},
                       });
}

TEST(Catalog, EveryModelIsConsistent) {
  std::set<std::string> names;
  for (const auto& gpu : gpu_catalogs()) {
    SCOPED_TRACE(gpu.name);
    EXPECT_TRUE(names.insert(gpu.name).second) << "duplicate model";
    std::set<int> ids;
    for (size_t i = 0; i < gpu.profiles.size(); ++i) {
      const MigProfile& p = gpu.profiles[i];
      SCOPED_TRACE(p.name);
      EXPECT_TRUE(ids.insert(p.id).second) << "duplicate profile id";
      // The name says the compute slices and roughly the memory.
      const ProfileName parsed = parse_profile_name(p.name);
      EXPECT_EQ(parsed.compute_slices, p.compute_slices);
      EXPECT_EQ(parsed.media_extensions, p.media_extensions());
      EXPECT_NEAR(static_cast<double>(p.memory_mib) / 1024.0, parsed.memory_gb, 0.2 * parsed.memory_gb);
      EXPECT_LE(p.compute_slices, gpu.compute_slices);
      EXPECT_GE(p.max_instances, 1);
      EXPECT_LE(p.max_instances, static_cast<int>(p.starts.size()));
      for (int s : p.starts) EXPECT_LE(s + p.memory_slices, gpu.memory_slices) << "start " << s;
      // Largest first: creation order and the planner's tie-breaks rely on it.
      if (i > 0) {
        const MigProfile& prev = gpu.profiles[i - 1];
        EXPECT_GE(prev.compute_slices, p.compute_slices);
        if (prev.compute_slices == p.compute_slices) {
          EXPECT_GE(prev.memory_slices, p.memory_slices);
        }
      }
      EXPECT_EQ(gpu.profile_index_by_id(p.id), static_cast<int>(i));
    }
  }
}

struct Lookup {
  std::string name;
  int64_t memory_mib;
  std::string expected;  // "" = no catalog
};

TEST(Catalog, LookupByDeviceName) {
  const std::vector<Lookup> cases = {
      {"NVIDIA H200", 0, "H200-141GB"},
      {"H200", 0, "H200-141GB"},
      {"H200-141GB", 0, "H200-141GB"},
      {"h200", 0, "H200-141GB"},
      {"NVIDIA H200 NVL", 143771, "H200-141GB"},
      {"NVIDIA A100-SXM4-40GB", 0, "A100-40GB"},
      {"NVIDIA A100-SXM4-80GB", 0, "A100-80GB"},
      {"NVIDIA A100 80GB PCIe", 0, "A100-80GB"},
      {"NVIDIA A100-PCIE", 40960, "A100-40GB"},
      {"NVIDIA A100-PCIE", 81920, "A100-80GB"},
      {"A100", 0, ""},  // ambiguous without a size
      {"NVIDIA H100 80GB HBM3", 0, "H100-80GB"},
      {"NVIDIA H100 PCIe", 81559, "H100-80GB"},
      {"NVIDIA H100 NVL", 95830, ""},  // 94 GB: other profiles
      {"NVIDIA GH100", 0, ""},          // not the H100 token
      {"NVIDIA A30", 24576, "A30-24GB"},
      {"Tesla V100-SXM2-32GB", 0, ""},
      {"NVIDIA GeForce RTX 4090", 0, ""},
      {"A100-99999999999GB", 0, ""},  // a size past int: no catalog, not std::out_of_range (fuzz/fuzz_specs.cpp)
  };
  for (const auto& c : cases) {
    const GpuCatalog* found = find_gpu_catalog(c.name, c.memory_mib);
    EXPECT_EQ(found ? found->name : std::string(), c.expected) << c.name << " / " << c.memory_mib;
  }
  EXPECT_THROW(gpu_catalog("Tesla V100"), ConfigError);
  try {
    gpu_catalog("A100");
    FAIL() << "ambiguous model accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("A100-40GB"), std::string::npos) << e.what();
  }
}

TEST(Catalog, ProfileByName) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  EXPECT_EQ(h200.profile("3g.71gb").id, 9);
  EXPECT_EQ(h200.find_profile("1g.5gb"), nullptr);
  try {
    h200.profile_index("1g.5gb");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("1g.18gb"), std::string::npos) << "lists the GPU's profiles: " << e.what();
  }
}

TEST(Catalog, ProfileNamesRoundTrip) {
  for (const std::string s : {"1g.18gb", "1g.18gb+me", "7g.141gb", "4g.24gb", "2g.12gb+me", "1g.5gb"}) {
    EXPECT_EQ(to_string(parse_profile_name(s)), s);
  }
  EXPECT_EQ(parse_profile_name("3g.71gb"), (ProfileName{3, 71, false}));
  for (const std::string bad : {"", "1g18gb", "0g.5gb", "1g.5GB", "g.5gb", "1g.5gb+xx", "1g.0gb", "1g.5gb+me+me", "1x1g.5gb",
                           "1g.99999999999gb", "8g.71gb", "10g.5gb"}) {
    EXPECT_THROW(parse_profile_name(bad), ConfigError) << bad;
  }
}

}  // namespace
}  // namespace ragmig::gpu
