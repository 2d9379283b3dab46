// NVML loading and the inventory: a missing library and a library that is not NVML are told apart and
// fall back to CPU slots; slots are built from device states; NVML_ERROR_IN_USE is retried.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/error.h"
#include "gpu/inventory.h"
#include "gpu/mig_applier.h"

namespace ragmig::gpu {
namespace {

TEST(Nvml, MissingLibraryIsAbsent) {
  NvmlStatus status = NvmlStatus::Available;
  std::string why;
  EXPECT_EQ(NvmlLibrary::try_open("/no/such/dir/libnvidia-ml.so.1", &status, &why), nullptr);
  EXPECT_EQ(status, NvmlStatus::Absent);
  EXPECT_NE(why.find("/no/such/dir/libnvidia-ml.so.1"), std::string::npos) << why;
  EXPECT_THROW(NvmlLibrary("/no/such/dir/libnvidia-ml.so.1"), DeviceError);
}

TEST(Nvml, ALibraryThatIsNotNvmlIsBroken) {
  // zlib is loaded into every ragmig process (core links it), so it exists wherever the tests run.
  NvmlStatus status = NvmlStatus::Available;
  std::string why;
  EXPECT_EQ(NvmlLibrary::try_open("libz.so.1", &status, &why), nullptr);
  EXPECT_EQ(status, NvmlStatus::Broken);
  EXPECT_NE(why.find("lacks the symbol nvmlInit_v2"), std::string::npos) << why;
}

TEST(Nvml, ALibraryWithoutItsDriverFailsInit) {
  NvmlStatus status = NvmlStatus::Available;
  std::string why;
  EXPECT_EQ(NvmlLibrary::try_open(NVML_WITHOUT_DRIVER, &status, &why), nullptr);
  EXPECT_EQ(status, NvmlStatus::InitFailed);
  EXPECT_NE(why.find("Driver Not Loaded (NVML error 9)"), std::string::npos) << why;
  const Inventory inv = read_inventory({.cpu_slots = 2, .nvml_library = NVML_WITHOUT_DRIVER});
  EXPECT_TRUE(inv.cpu_fallback);
  EXPECT_EQ(inv.slots.size(), 2u);
  EXPECT_NE(inv.fallback_reason.find("NVML init_failed"), std::string::npos) << inv.fallback_reason;
}

TEST(Nvml, DefaultPathFollowsTheEnvironment) {
  const char* old = std::getenv(kNvmlLibraryEnv);
  const std::string saved = old ? old : "";
  ::setenv(kNvmlLibraryEnv, "/opt/other/libnvidia-ml.so", 1);
  EXPECT_EQ(NvmlLibrary::default_path(), "/opt/other/libnvidia-ml.so");
  ::setenv(kNvmlLibraryEnv, "", 1);
  EXPECT_EQ(NvmlLibrary::default_path(), kNvmlDefaultLibrary);
  if (old) ::setenv(kNvmlLibraryEnv, saved.c_str(), 1); else ::unsetenv(kNvmlLibraryEnv);
}

TEST(Inventory, WithoutNvmlOffersCpuSlotsAndSaysWhy) {
  for (const std::string library : {"/no/such/libnvidia-ml.so.1", "libz.so.1"}) {
    const Inventory inv = read_inventory({.cpu_slots = 3, .nvml_library = library});
    EXPECT_NE(inv.nvml_status, NvmlStatus::Available);
    EXPECT_TRUE(inv.cpu_fallback);
    EXPECT_NE(inv.fallback_reason.find("NVML"), std::string::npos) << inv.fallback_reason;
    EXPECT_TRUE(inv.gpus.empty());
    ASSERT_EQ(inv.slots.size(), 3u);
    for (size_t k = 0; k < inv.slots.size(); ++k) {
      EXPECT_EQ(inv.slots[k].id, "cpu:" + std::to_string(k));
      EXPECT_EQ(inv.slots[k].kind, SlotKind::Cpu);
      EXPECT_EQ(inv.slots[k].cuda_visible_devices, "");
      EXPECT_EQ(inv.slots[k].gpu_index, -1);
      EXPECT_GT(inv.slots[k].memory_mib, 0);
    }
    const nlohmann::json j = to_json(inv);
    EXPECT_FALSE(j["nvml"]["available"].get<bool>());
    EXPECT_EQ(j["slots"].size(), 3u);
  }
  EXPECT_EQ(read_inventory({.cpu_slots = 0, .nvml_library = "/no/such/lib.so"}).slots.size(),
            static_cast<size_t>(default_cpu_slots()));
  EXPECT_THROW(read_inventory({.cpu_slots = -1, .nvml_library = ""}), ConfigError);
}

TEST(Inventory, ThisMachine) {
  const Inventory inv = read_inventory({.cpu_slots = 2, .nvml_library = ""});
  if (inv.nvml_status != NvmlStatus::Available) {
    EXPECT_TRUE(inv.cpu_fallback);
    EXPECT_EQ(inv.slots.size(), 2u);
    return;
  }
  // With NVML: every GPU is listed with a name, and every slot names the device CUDA should see.
  for (const auto& g : inv.gpus) EXPECT_FALSE(g.name.empty());
  for (const auto& s : inv.slots) {
    const char* prefix = s.kind == SlotKind::Mig ? "MIG-" : s.kind == SlotKind::Gpu ? "GPU-" : "";
    EXPECT_EQ(s.cuda_visible_devices.rfind(prefix, 0), 0u) << s.id;
  }
}

TEST(Inventory, SlotsFromDeviceStates) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  GpuDeviceState mig;
  mig.index = 0;
  mig.name = "NVIDIA H200";
  mig.uuid = "GPU-aaaa";
  mig.mig_capable = mig.mig_enabled = true;
  mig.catalog = &h200;
  GpuInstanceState gi3;
  gi3.gi_id = 3;
  gi3.profile = "3g.71gb";
  gi3.memory_mib = 66560;
  gi3.devices = {{0, "MIG-1111", 66000, 100, std::nullopt, true}};
  GpuInstanceState gi9;  // a GPU instance without a compute instance: not usable
  gi9.gi_id = 9;
  gi9.profile = "1g.18gb";
  GpuInstanceState gi7;
  gi7.gi_id = 7;
  gi7.profile = "1g.18gb";
  gi7.placement_start = 5;
  gi7.memory_mib = 16384;
  gi7.devices = {{0, "MIG-2222", 0, 0, std::nullopt, std::nullopt}};
  mig.instances = {gi3, gi9, gi7};

  GpuDeviceState whole;
  whole.index = 1;
  whole.name = "NVIDIA A100-SXM4-40GB";
  whole.uuid = "GPU-bbbb";
  whole.memory_total_mib = 40960;
  whole.mig_capable = true;
  whole.mig_enabled = false;

  GpuDeviceState empty_mig = mig;  // MIG on, no instances yet
  empty_mig.index = 2;
  empty_mig.instances.clear();

  GpuDeviceState unreadable;  // NVML failed on it: no UUID
  unreadable.index = 3;

  const auto slots = slots_from_devices({mig, whole, empty_mig, unreadable});
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots[0].id, "mig:0:3g.71gb@0");
  EXPECT_EQ(slots[0].kind, SlotKind::Mig);
  EXPECT_EQ(slots[0].profile, "3g.71gb");
  EXPECT_EQ(slots[0].memory_mib, 66000);
  EXPECT_EQ(slots[0].cuda_visible_devices, "MIG-1111");
  EXPECT_TRUE(slots[0].busy);
  EXPECT_EQ(slots[1].id, "mig:0:1g.18gb@5");
  // Named by placement, not by the driver's instance id; a second compute instance of one GPU instance
  // gets its own name.
  EXPECT_EQ(mig_slot_id(2, gi7, 0), "mig:2:1g.18gb@5");
  EXPECT_EQ(mig_slot_id(2, gi7, 1), "mig:2:1g.18gb@5:ci1");
  // ... and read back to its profile (sim measure names slots re-partitioned away by it).
  EXPECT_EQ(mig_slot_profile(mig_slot_id(2, gi7, 1)), "1g.18gb");
  EXPECT_EQ(mig_slot_profile("gpu:1"), std::nullopt);
  EXPECT_EQ(mig_slot_profile("mig:0:@3"), std::nullopt);
  EXPECT_EQ(slots[1].memory_mib, 16384);  // the device did not report memory: the profile's
  EXPECT_FALSE(slots[1].busy);
  EXPECT_EQ(slots[2].id, "gpu:1");
  EXPECT_EQ(slots[2].kind, SlotKind::Gpu);
  EXPECT_EQ(slots[2].cuda_visible_devices, "GPU-bbbb");
  EXPECT_EQ(slots[2].memory_mib, 40960);
}

TEST(Applier, RetriesInUseOnly) {
  int calls = 0;
  const auto in_use_twice = [&] { return ++calls <= 2 ? nvml::kErrorInUse : nvml::kSuccess; };
  EXPECT_EQ(retry_in_use(in_use_twice, 5, std::chrono::milliseconds(0)), nvml::kSuccess);
  EXPECT_EQ(calls, 3);
  calls = 0;
  EXPECT_EQ(retry_in_use(in_use_twice, 1, std::chrono::milliseconds(0)), nvml::kErrorInUse);
  EXPECT_EQ(calls, 2);
  calls = 0;
  EXPECT_EQ(retry_in_use([&] { ++calls; return nvml::kErrorNoPermission; }, 5, std::chrono::milliseconds(0)),
            nvml::kErrorNoPermission);
  EXPECT_EQ(calls, 1);
}

TEST(Applier, ComputeInstanceSpansItsGpuInstance) {
  EXPECT_EQ(full_compute_instance_profile(1), nvml::kComputeInstanceProfile1Slice);
  EXPECT_EQ(full_compute_instance_profile(3), nvml::kComputeInstanceProfile3Slice);
  EXPECT_EQ(full_compute_instance_profile(7), nvml::kComputeInstanceProfile7Slice);
  EXPECT_THROW(full_compute_instance_profile(5), DeviceError);
}

TEST(Applier, DryRunPrintsNvidiaSmiCommandsAndRefusesMigOffWithoutPermission) {
  const GpuCatalog& h200 = gpu_catalog("H200");
  GpuState g;
  g.catalog = &h200;
  g.instances = {{parse_placement(h200, "7g.141gb@0"), false, 4}};
  PartitionPlan plan = plan_partitions({g}, parse_demands("3g.71gb:2"));
  EXPECT_EQ(dry_run_lines(plan, {}),
            (std::vector<std::string>{"# GPU 0 (H200-141GB): 7g.141gb@0 -> 3g.71gb@0+3g.71gb@4",
                                      "nvidia-smi mig -i 0 -gi 4 -dci", "nvidia-smi mig -i 0 -gi 4 -dgi",
                                      "nvidia-smi mig -i 0 -cgi 9:0 -C", "nvidia-smi mig -i 0 -cgi 9:4 -C"}));
  EXPECT_TRUE(plan_refusals(plan, {}).empty());

  GpuState off;
  off.catalog = &h200;
  off.mig_enabled = false;
  plan = plan_partitions({off}, parse_demands("7g.141gb:1"), {.allow_enable_mig = true});
  EXPECT_EQ(plan_refusals(plan, {}).size(), 1u);
  EXPECT_TRUE(plan_refusals(plan, {.execute = false, .enable_mig = true}).empty());
  const auto lines = dry_run_lines(plan, {});
  EXPECT_NE(lines.back().find("nothing would change without --enable-mig"), std::string::npos);
  const auto enabled = dry_run_lines(plan, {.execute = false, .enable_mig = true});
  EXPECT_EQ(enabled[1], "nvidia-smi -i 0 -mig 1");
  EXPECT_EQ(enabled[2], "nvidia-smi mig -i 0 -cgi 0:0 -C");
}

}  // namespace
}  // namespace ragmig::gpu
