// Fuzzes CUDA_VISIBLE_DEVICES as ragmig reads it (gpu/visible_devices.cpp) on a fixed machine of two GPUs, one
// whole and one with MIG devices: every value ends in the GPUs it names or a ConfigError, and what it leaves is
// always a subset of the machine (no GPU, instance or MIG device made up or duplicated).
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "fuzz_support.h"
#include "gpu/visible_devices.h"

namespace {

// A MIG device of compute instance `ci` named `uuid` (memory, utilisation and busy unknown).
ragmig::gpu::MigDeviceState mig_device(int ci, std::string uuid) {
  ragmig::gpu::MigDeviceState d;
  d.ci_id = ci;
  d.uuid = std::move(uuid);
  return d;
}

std::vector<ragmig::gpu::GpuDeviceState> machine() {
  std::vector<ragmig::gpu::GpuDeviceState> gpus(2);
  for (int k = 0; k < 2; ++k) {
    gpus[k].index = k;
    gpus[k].uuid = k == 0 ? "GPU-aaaa0000-0000" : "GPU-aaab1111-1111";
  }
  gpus[1].mig_enabled = true;
  for (int i = 0; i < 3; ++i) {
    ragmig::gpu::GpuInstanceState gi;
    gi.gi_id = i + 1;
    gi.devices.push_back(mig_device(0, "MIG-cccc000" + std::to_string(i)));
    if (i == 2) gi.devices.push_back(mig_device(1, "MIG-dddd0002"));
    gpus[1].instances.push_back(gi);
  }
  return gpus;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string value(reinterpret_cast<const char*>(data), size);
  ragmig::fuzz::expect_typed_errors([&] {
    const auto all = machine();
    const auto v = ragmig::gpu::visible_devices(all, value.c_str());
    std::set<int> seen;
    for (const auto& g : v.gpus) {
      if (g.index < 0 || g.index > 1 || !seen.insert(g.index).second)
        ragmig::fuzz::finding("visible_devices", "a GPU made up or left twice");
      size_t devices = 0, original = 0;
      for (const auto& gi : g.instances) devices += gi.devices.size();
      for (const auto& gi : all[static_cast<size_t>(g.index)].instances) original += gi.devices.size();
      if (devices > original || (g.layout_fixed && devices == 0) || (!g.layout_fixed && devices != original))
        ragmig::fuzz::finding("visible_devices", "MIG devices made up, or a partial GPU not marked layout_fixed");
    }
    if (v.gpus.size() < all.size() && v.note.empty()) ragmig::fuzz::finding("visible_devices", "GPUs hidden silently");
  });
  return 0;
}
