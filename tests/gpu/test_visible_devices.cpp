// CUDA_VISIBLE_DEVICES: which GPUs and MIG devices of the machine's a scheduler may use and re-lay out, and
// every entry that names nothing refused with the entry named (CUDA would silently drop it and what follows).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "core/error.h"
#include "exec/machine_partitioner.h"
#include "gpu/visible_devices.h"

namespace ragmig::gpu {
namespace {

// A MIG device of compute instance `ci` named `uuid` (memory, utilisation and busy unknown).
MigDeviceState mig_device(int ci, std::string uuid) {
  MigDeviceState d;
  d.ci_id = ci;
  d.uuid = std::move(uuid);
  return d;
}

// Two H200s: GPU 0 whole, GPU 1 with MIG on and two 3g instances, one MIG device each.
std::vector<GpuDeviceState> machine() {
  std::vector<GpuDeviceState> gpus(2);
  for (int k = 0; k < 2; ++k) {
    gpus[k].index = k;
    gpus[k].name = "NVIDIA H200";
    gpus[k].uuid = k == 0 ? "GPU-aaaa0000-0000" : "GPU-bbbb1111-1111";
    gpus[k].memory_total_mib = 143771;
    gpus[k].catalog = find_gpu_catalog("NVIDIA H200", 143771);
  }
  gpus[1].mig_capable = gpus[1].mig_enabled = true;
  for (int i = 0; i < 2; ++i) {
    GpuInstanceState gi;
    gi.gi_id = i + 1;
    gi.profile = "3g.71gb";
    gi.profile_id = 9;
    gi.placement_start = 4 * i;
    gi.placement_size = 4;
    gi.devices.push_back(mig_device(0, "MIG-cccc000" + std::to_string(i)));
    gpus[1].instances.push_back(gi);
  }
  return gpus;
}

std::string refusal(const char* value) {
  try {
    visible_devices(machine(), value);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(VisibleDevices, UnsetLeavesEveryGpuAndSaysNothing) {
  const auto v = visible_devices(machine(), nullptr);
  EXPECT_EQ(v.gpus.size(), 2u);
  EXPECT_EQ(v.note, "");
}

TEST(VisibleDevices, EmptyHidesEveryGpu) {
  for (const char* value : {"", " ", "-1", "NoDevFiles"}) {
    const auto v = visible_devices(machine(), value);
    EXPECT_TRUE(v.gpus.empty()) << value;
    EXPECT_NE(v.note.find("hides all 2 GPU(s)"), std::string::npos) << v.note;
  }
}

TEST(VisibleDevices, IndicesAndUuidPrefixesNameWholeGpus) {
  auto v = visible_devices(machine(), "1");
  ASSERT_EQ(v.gpus.size(), 1u);
  EXPECT_EQ(v.gpus[0].index, 1);
  EXPECT_FALSE(v.gpus[0].layout_fixed);
  EXPECT_EQ(v.gpus[0].instances.size(), 2u);
  EXPECT_NE(v.note.find("hides 1 of 2 GPU(s)"), std::string::npos) << v.note;
  v = visible_devices(machine(), "GPU-aaaa");
  ASSERT_EQ(v.gpus.size(), 1u);
  EXPECT_EQ(v.gpus[0].index, 0);
  v = visible_devices(machine(), " 1 , GPU-aaaa0000-0000 ");
  EXPECT_EQ(v.gpus.size(), 2u);
  EXPECT_EQ(v.note, "");
}

TEST(VisibleDevices, AGpuNamedByOneMigDeviceKeepsItAloneAndItsLayout) {
  const auto v = visible_devices(machine(), "MIG-cccc0001");
  ASSERT_EQ(v.gpus.size(), 1u);
  EXPECT_EQ(v.gpus[0].index, 1);
  EXPECT_TRUE(v.gpus[0].layout_fixed);
  ASSERT_EQ(v.gpus[0].instances.size(), 1u);
  EXPECT_EQ(v.gpus[0].instances[0].devices.at(0).uuid, "MIG-cccc0001");
  EXPECT_NE(v.note.find("names only MIG devices"), std::string::npos) << v.note;
  // The slots offered are that device's; the partitioner leaves the GPU as it is and says why.
  const auto slots = exec::device_slots(v.gpus);
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].device, "MIG-cccc0001");
  EXPECT_FALSE(slots[0].reshapable);
  std::vector<std::string> notes;
  EXPECT_TRUE(exec::plannable_gpus(v.gpus, &notes).empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("CUDA_VISIBLE_DEVICES names only some of its MIG devices"), std::string::npos) << notes[0];
  // Named whole as well, the GPU is ragmig's to re-lay out.
  const auto both = visible_devices(machine(), "MIG-cccc0001,1");
  ASSERT_EQ(both.gpus.size(), 1u);
  EXPECT_FALSE(both.gpus[0].layout_fixed);
  EXPECT_EQ(both.gpus[0].instances.size(), 2u);
  EXPECT_EQ(exec::plannable_gpus(both.gpus, nullptr).size(), 1u);
}

TEST(VisibleDevices, AnEntryThatNamesNothingIsRefusedByName) {
  EXPECT_NE(refusal("0,7").find("entry \"7\" is no GPU index of this machine's 2"), std::string::npos) << refusal("0,7");
  EXPECT_NE(refusal("GPU-ffff").find("entry \"GPU-ffff\" names no GPU"), std::string::npos);
  EXPECT_NE(refusal("GPU-").find("entry \"GPU-\" names more than one GPU"), std::string::npos);
  EXPECT_NE(refusal("MIG-dddd").find("entry \"MIG-dddd\" names no MIG device"), std::string::npos);
  EXPECT_NE(refusal("MIG-cccc").find("entry \"MIG-cccc\" names more than one MIG device"), std::string::npos);
  EXPECT_NE(refusal("cuda:0").find("entry \"cuda:0\" is neither an index nor a GPU or MIG UUID"), std::string::npos);
  EXPECT_NE(refusal("0,,1").find("entry \"\" is empty"), std::string::npos);
  EXPECT_NE(refusal("0,7").find("CUDA_VISIBLE_DEVICES=\"0,7\""), std::string::npos);
}

// On a machine of two GPU models CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and NVML by
// bus: an index may then mean another GPU to CUDA than to ragmig, so it is refused with the two ways out.
TEST(VisibleDevices, IndicesOnAMachineOfTwoModelsNeedThePciBusOrder) {
  auto mixed = machine();
  mixed[0].name = "NVIDIA A100-SXM4-80GB";
  std::string message;
  try {
    visible_devices(mixed, "1");
  } catch (const ConfigError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("entry \"1\" is an index on a machine of several GPU models"), std::string::npos) << message;
  EXPECT_NE(message.find("set CUDA_DEVICE_ORDER=PCI_BUS_ID, or name the GPU by UUID"), std::string::npos) << message;
  EXPECT_THROW(visible_devices(mixed, "1", "FASTEST_FIRST"), ConfigError);
  EXPECT_EQ(visible_devices(mixed, "1", "PCI_BUS_ID").gpus.at(0).uuid, "GPU-bbbb1111-1111");
  EXPECT_EQ(visible_devices(mixed, "GPU-bbbb").gpus.at(0).uuid, "GPU-bbbb1111-1111") << "a UUID is one GPU to both";
  EXPECT_EQ(visible_devices(machine(), "1").gpus.at(0).uuid, "GPU-bbbb1111-1111") << "one model: the same order";
}

}  // namespace
}  // namespace ragmig::gpu
