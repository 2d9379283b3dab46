// Reading device state through NVML. GPU instances are listed per profile (nvmlDeviceGetGpuInstances),
// which finds instances that have no compute instance too; MIG devices are then matched to them by GPU
// instance id. Calls that a driver may not support only leave a field empty and a note.
#include "gpu/nvml_device.h"

#include <algorithm>

#include "core/error.h"

namespace ragmig::gpu {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

std::string note_for(const NvmlLibrary& nvml, const std::string& what, nvml::Return rc) {
  return what + ": " + nvml.error_string(rc);
}

// Whether processes run on `device` (a GPU or MIG device handle). Asking with a zero-sized buffer means
// success = none, "insufficient size" = some, without ever reading the per-process structs.
std::optional<bool> has_processes(const NvmlLibrary& nvml, nvml::Device device) {
  if (!nvml.api().device_get_compute_running_processes) return std::nullopt;
  unsigned int count = 0;
  const nvml::Return rc = nvml.api().device_get_compute_running_processes(device, &count, nullptr);
  if (rc == nvml::kSuccess) return count > 0;
  if (rc == nvml::kErrorInsufficientSize) return true;
  return std::nullopt;
}

void read_mig_devices(const NvmlLibrary& nvml, nvml::Device device, GpuDeviceState& state) {
  const nvml::Api& api = nvml.api();
  unsigned int max_count = 0;
  nvml::Return rc = api.device_get_max_mig_device_count(device, &max_count);
  if (rc != nvml::kSuccess) {
    state.notes.push_back(note_for(nvml, "MIG device count", rc));
    return;
  }
  for (unsigned int i = 0; i < max_count; ++i) {
    nvml::Device mig = nullptr;
    rc = api.device_get_mig_device_handle_by_index(device, i, &mig);
    if (rc == nvml::kErrorNotFound || rc == nvml::kErrorInvalidArgument) continue;  // an unused index
    if (rc != nvml::kSuccess) {
      state.notes.push_back(note_for(nvml, "MIG device " + std::to_string(i), rc));
      continue;
    }
    unsigned int gi = 0;
    unsigned int ci = 0;
    if (api.device_get_gpu_instance_id(mig, &gi) != nvml::kSuccess ||
        api.device_get_compute_instance_id(mig, &ci) != nvml::kSuccess) {
      state.notes.push_back("MIG device " + std::to_string(i) + ": its GPU/compute instance ids are unreadable");
      continue;
    }
    MigDeviceState dev;
    dev.ci_id = static_cast<int>(ci);
    char uuid[nvml::kDeviceUuidBufferSize] = {};
    if (api.device_get_uuid(mig, uuid, sizeof uuid) == nvml::kSuccess) dev.uuid = uuid;
    nvml::Memory mem{};
    if (api.device_get_memory_info(mig, &mem) == nvml::kSuccess) {
      dev.memory_total_mib = static_cast<int64_t>(mem.total / kMiB);
      dev.memory_used_mib = static_cast<int64_t>(mem.used / kMiB);
    }
    nvml::Utilization util{};
    if (api.device_get_utilization_rates(mig, &util) == nvml::kSuccess) dev.utilisation_gpu = static_cast<int>(util.gpu);
    dev.busy = has_processes(nvml, mig);

    auto it = std::find_if(state.instances.begin(), state.instances.end(),
                           [&](const GpuInstanceState& g) { return g.gi_id == static_cast<int>(gi); });
    if (it == state.instances.end()) {
      // A MIG device whose GPU instance the per-profile listing missed (a profile NVML did not report).
      GpuInstanceState g;
      g.gi_id = static_cast<int>(gi);
      g.profile = "unknown";
      state.instances.push_back(g);
      it = std::prev(state.instances.end());
    }
    it->devices.push_back(dev);
  }
}

}  // namespace

nvml::Device device_handle(const NvmlLibrary& nvml, int index) {
  nvml::Device device = nullptr;
  nvml.check(nvml.api().device_get_handle_by_index(static_cast<unsigned>(index), &device),
             "GPU " + std::to_string(index));
  return device;
}

std::optional<int> utilisation_by_uuid(const NvmlLibrary& nvml, const std::string& uuid) {
  const nvml::Api& api = nvml.api();
  nvml::Device device = nullptr;
  if (!api.device_get_handle_by_uuid || api.device_get_handle_by_uuid(uuid.c_str(), &device) != nvml::kSuccess) {
    return std::nullopt;
  }
  nvml::Utilization util{};
  if (api.device_get_utilization_rates(device, &util) != nvml::kSuccess) return std::nullopt;
  return static_cast<int>(util.gpu);
}

std::optional<std::pair<int64_t, int64_t>> memory_by_uuid(const NvmlLibrary& nvml, const std::string& uuid) {
  const nvml::Api& api = nvml.api();
  nvml::Device device = nullptr;
  if (!api.device_get_handle_by_uuid || api.device_get_handle_by_uuid(uuid.c_str(), &device) != nvml::kSuccess)
    return std::nullopt;
  nvml::Memory mem{};
  if (api.device_get_memory_info(device, &mem) != nvml::kSuccess) return std::nullopt;
  return std::make_pair(static_cast<int64_t>(mem.used), static_cast<int64_t>(mem.total));
}

std::string driver_version(const NvmlLibrary& nvml) {
  if (!nvml.api().system_get_driver_version) return "";
  char version[nvml::kSystemDriverVersionBufferSize] = {};
  if (nvml.api().system_get_driver_version(version, sizeof version) != nvml::kSuccess) return "";
  return version;
}

std::vector<GpuInstanceState> read_gpu_instances(const NvmlLibrary& nvml, nvml::Device device,
                                                 const GpuCatalog* catalog, std::vector<std::string>* notes) {
  const nvml::Api& api = nvml.api();
  std::vector<GpuInstanceState> out;
  for (unsigned idx = 0; idx < nvml::kGpuInstanceProfileCount; ++idx) {
    nvml::GpuInstanceProfileInfo info{};
    if (api.device_get_gpu_instance_profile_info(device, idx, &info) != nvml::kSuccess) continue;  // not offered
    if (info.instanceCount == 0) continue;
    std::vector<nvml::GpuInstance> handles(info.instanceCount);
    unsigned int count = 0;
    const nvml::Return rc = api.device_get_gpu_instances(device, info.id, handles.data(), &count);
    if (rc != nvml::kSuccess) {
      if (notes) notes->push_back(note_for(nvml, "GPU instances of profile id " + std::to_string(info.id), rc));
      continue;
    }
    for (unsigned int k = 0; k < count && k < handles.size(); ++k) {
      nvml::GpuInstanceInfo gi{};
      if (api.gpu_instance_get_info(handles[k], &gi) != nvml::kSuccess) continue;
      GpuInstanceState s;
      s.gi_id = static_cast<int>(gi.id);
      s.profile_id = static_cast<int>(gi.profileId);
      s.placement_start = static_cast<int>(gi.placement.start);
      s.placement_size = static_cast<int>(gi.placement.size);
      s.memory_mib = static_cast<int64_t>(info.memorySizeMB);
      const int p = catalog ? catalog->profile_index_by_id(s.profile_id) : -1;
      s.profile = p >= 0 ? catalog->profiles[static_cast<size_t>(p)].name : "id" + std::to_string(s.profile_id);
      out.push_back(s);
    }
  }
  std::sort(out.begin(), out.end(), [](const GpuInstanceState& a, const GpuInstanceState& b) { return a.gi_id < b.gi_id; });
  return out;
}

GpuDeviceState read_device(const NvmlLibrary& nvml, int index) {
  const nvml::Api& api = nvml.api();
  GpuDeviceState state;
  state.index = index;
  const nvml::Device device = device_handle(nvml, index);
  char name[nvml::kDeviceNameBufferSize] = {};
  if (api.device_get_name(device, name, sizeof name) == nvml::kSuccess) state.name = name;
  char uuid[nvml::kDeviceUuidBufferSize] = {};
  if (api.device_get_uuid(device, uuid, sizeof uuid) == nvml::kSuccess) state.uuid = uuid;
  nvml::Memory mem{};
  if (nvml::Return rc = api.device_get_memory_info(device, &mem); rc == nvml::kSuccess) {
    state.memory_total_mib = static_cast<int64_t>(mem.total / kMiB);
    state.memory_used_mib = static_cast<int64_t>(mem.used / kMiB);
  } else {
    state.notes.push_back(note_for(nvml, "memory", rc));
  }
  nvml::Utilization util{};
  if (api.device_get_utilization_rates(device, &util) == nvml::kSuccess) {
    state.utilisation_gpu = static_cast<int>(util.gpu);
    state.utilisation_memory = static_cast<int>(util.memory);
  }
  state.catalog = find_gpu_catalog(state.name, state.memory_total_mib);
  state.busy = has_processes(nvml, device);

  if (!api.has_mig()) {
    state.notes.push_back("this NVML has no MIG entry points");
    return state;
  }
  unsigned int current = 0;
  unsigned int pending = 0;
  const nvml::Return rc = api.device_get_mig_mode(device, &current, &pending);
  if (rc == nvml::kErrorNotSupported) return state;  // not a MIG GPU
  if (rc != nvml::kSuccess) {
    state.notes.push_back(note_for(nvml, "MIG mode", rc));
    return state;
  }
  state.mig_capable = true;
  state.mig_enabled = current == nvml::kDeviceMigEnable;
  state.mig_pending = current != pending;
  if (!state.mig_enabled) return state;
  state.instances = read_gpu_instances(nvml, device, state.catalog, &state.notes);
  read_mig_devices(nvml, device, state);
  return state;
}

std::vector<GpuDeviceState> read_devices(const NvmlLibrary& nvml) {
  unsigned int count = 0;
  nvml.check(nvml.api().device_get_count(&count), "counting GPUs");
  std::vector<GpuDeviceState> out;
  for (unsigned int i = 0; i < count; ++i) {
    try {
      out.push_back(read_device(nvml, static_cast<int>(i)));
    } catch (const DeviceError& e) {
      GpuDeviceState s;
      s.index = static_cast<int>(i);
      s.notes.push_back(e.what());
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace ragmig::gpu
