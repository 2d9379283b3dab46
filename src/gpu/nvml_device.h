// What NVML says about the machine's GPUs right now: name, UUID, memory, utilisation, MIG mode, and per
// GPU instance its profile, placement, MIG devices (UUIDs for CUDA_VISIBLE_DEVICES), memory use and
// whether processes run on it. Read-only: nothing here changes a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpu/mig_catalog.h"
#include "gpu/nvml_library.h"

namespace ragmig::gpu {

/// A MIG device: one compute instance of a GPU instance, the unit CUDA sees.
struct MigDeviceState {
  int ci_id = -1;
  std::string uuid;                     ///< "MIG-…", the value for CUDA_VISIBLE_DEVICES
  int64_t memory_total_mib = 0;
  int64_t memory_used_mib = 0;
  std::optional<int> utilisation_gpu;   ///< percent; most drivers do not report it per MIG device
  std::optional<bool> busy;             ///< processes run on it; unknown when the driver cannot say
};

/// A GPU instance, the unit of a MIG layout.
struct GpuInstanceState {
  int gi_id = -1;
  int profile_id = -1;        ///< nvidia-smi profile id
  std::string profile;        ///< catalog name ("1g.18gb"), or "id<N>" when the catalog lacks it
  int placement_start = 0;    ///< memory slices
  int placement_size = 0;
  int64_t memory_mib = 0;     ///< from NVML's profile info
  std::vector<MigDeviceState> devices;
};

struct GpuDeviceState {
  int index = 0;
  std::string name;                    ///< "NVIDIA H200"
  std::string uuid;                    ///< "GPU-…"
  int64_t memory_total_mib = 0;
  int64_t memory_used_mib = 0;
  std::optional<int> utilisation_gpu;  ///< percent
  std::optional<int> utilisation_memory;
  std::optional<bool> busy;            ///< processes run on the GPU (any of its MIG devices); unknown if unsaid
  bool mig_capable = false;
  bool mig_enabled = false;            ///< current MIG mode
  bool mig_pending = false;            ///< a mode change waits for a GPU reset
  bool layout_fixed = false;           ///< only some of its MIG devices are ragmig's (visible_devices.h)
  const GpuCatalog* catalog = nullptr; ///< null for GPUs the catalog does not know
  std::vector<GpuInstanceState> instances;
  std::vector<std::string> notes;      ///< what could not be read, and why
};

/// The handle of GPU `index`. Throws DeviceError.
nvml::Device device_handle(const NvmlLibrary& nvml, int index);
/// Reads every GPU. Throws DeviceError only when the device list itself cannot be read; smaller failures
/// become notes.
std::vector<GpuDeviceState> read_devices(const NvmlLibrary& nvml);
/// Reads one GPU.
GpuDeviceState read_device(const NvmlLibrary& nvml, int index);
/// The GPU utilisation (percent over NVML's last sample period) of the GPU or MIG device with this UUID;
/// nullopt when NVML cannot say (most drivers do not for MIG devices) or knows no such UUID.
std::optional<int> utilisation_by_uuid(const NvmlLibrary& nvml, const std::string& uuid);
/// Memory {used, total} in bytes of the GPU or MIG device with this UUID; nullopt when NVML cannot say.
std::optional<std::pair<int64_t, int64_t>> memory_by_uuid(const NvmlLibrary& nvml, const std::string& uuid);
/// The driver version, or "" when NVML does not say.
std::string driver_version(const NvmlLibrary& nvml);

/// The GPU instances of a MIG-enabled device (profile id, id, placement), by asking NVML per profile.
std::vector<GpuInstanceState> read_gpu_instances(const NvmlLibrary& nvml, nvml::Device device,
                                                 const GpuCatalog* catalog, std::vector<std::string>* notes);

}  // namespace ragmig::gpu
