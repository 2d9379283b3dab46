// The machine's inventory as the scheduler's executor needs it: every usable slot (a MIG device, a whole
// GPU, or a CPU slot where there is no GPU) with an id, kind, profile, memory and the CUDA_VISIBLE_DEVICES
// value that pins a worker to it. Without NVML or a GPU the machine offers CPU slots and says why.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpu/nvml_device.h"
#include "gpu/nvml_library.h"

namespace ragmig::gpu {

enum class SlotKind { Mig, Gpu, Cpu };
const char* to_string(SlotKind kind);

struct Slot {
  std::string id;                    ///< stable name: mig_slot_id(), "gpu:<index>", "cpu:<k>"
  SlotKind kind = SlotKind::Cpu;
  std::string profile;               ///< MIG profile ("1g.18gb"), GPU name ("NVIDIA H200"), or "cpu"
  int64_t memory_mib = 0;            ///< the slot's memory (a CPU slot's share of the RAM)
  std::string cuda_visible_devices;  ///< "MIG-…", "GPU-…", or "" (no GPU) for CPU slots
  int gpu_index = -1;                ///< NVML index of the GPU, -1 for CPU slots
  bool busy = false;                 ///< processes ran on it when the inventory was taken
};

struct Inventory {
  NvmlStatus nvml_status = NvmlStatus::Absent;
  std::string nvml_detail;           ///< why NVML is not available, or "" when it is
  std::string nvml_library;          ///< the library file that was tried
  std::string driver_version;
  std::vector<GpuDeviceState> gpus;
  std::vector<Slot> slots;
  std::string visibility;            ///< what CUDA_VISIBLE_DEVICES hid (visible_devices.h), or ""
  bool cpu_fallback = false;         ///< slots are CPU slots because there is no usable GPU
  std::string fallback_reason;
};

struct InventoryOptions {
  /// CPU slots: 0 = automatic (one per usable core where there is no usable GPU, none beside GPUs);
  /// N > 0 = N CPU slots, beside the GPU slots where there are GPUs.
  int cpu_slots = 0;
  std::string nvml_library;   ///< "" = NvmlLibrary::default_path() ($RAGMIG_NVML_LIBRARY or libnvidia-ml.so.1)
};

/// The slot id of compute instance `ci_id` of GPU instance `gi` on GPU `gpu`: "mig:<gpu>:<profile>@<start>"
/// ("mig:0:3g.71gb@4"), with ":ci<id>" after it for any but compute instance 0. Named by placement, not by
/// NVML's GPU instance id, which the driver hands out again after a destroy: an id never names two
/// different instances, whatever was destroyed and created in between.
std::string mig_slot_id(int gpu, const GpuInstanceState& gi, int ci_id);
/// The profile a mig_slot_id names ("3g.71gb" of "mig:0:3g.71gb@4:ci1"); nullopt for any other id.
std::optional<std::string> mig_slot_profile(const std::string& slot_id);

/// One per hardware thread (std::thread::hardware_concurrency), at least 1: a CPU job is one process
/// whose own thread count the job decides, so the slot count only bounds how many run side by side.
int default_cpu_slots();

/// Reads the machine: NVML when it can be loaded, else CPU slots. Never changes a device. Throws
/// ConfigError for a negative slot count only.
Inventory read_inventory(const InventoryOptions& options = {});

/// The usable slots of these GPUs: each MIG device of a MIG-enabled GPU, each GPU with MIG off as a
/// whole. A GPU with MIG on but no instances offers nothing (it must be partitioned first).
std::vector<Slot> slots_from_devices(const std::vector<GpuDeviceState>& gpus);
/// `count` CPU slots sharing `total_memory_mib` evenly.
std::vector<Slot> cpu_slots(int count, int64_t total_memory_mib);
/// The machine's RAM in MiB.
int64_t system_memory_mib();

nlohmann::json to_json(const Slot& slot);
nlohmann::json to_json(const GpuDeviceState& gpu);
nlohmann::json to_json(const Inventory& inventory);

}  // namespace ragmig::gpu
