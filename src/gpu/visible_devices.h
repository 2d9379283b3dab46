// The GPUs CUDA_VISIBLE_DEVICES leaves to ragmig. A scheduler started inside a Slurm allocation, or by a user
// given two of a machine's eight GPUs, must neither place jobs on nor re-lay out the GPUs it was not given,
// though NVML shows it every GPU of the machine. Pure: the caller reads NVML and the environment.
#pragma once

#include <string>
#include <vector>

#include "gpu/nvml_device.h"

namespace ragmig::gpu {

struct Visibility {
  std::vector<GpuDeviceState> gpus;  ///< the GPUs left (a GPU named by its MIG devices keeps only those)
  std::string note;                  ///< what CUDA_VISIBLE_DEVICES hid, or "" when it hid nothing
};

/// The GPUs of `gpus` that `value` (CUDA_VISIBLE_DEVICES; null: unset) leaves. Unset: every GPU. Empty, "-1"
/// or "NoDevFiles": none. Otherwise a comma-separated list whose entries are GPU indices as NVML numbers them
/// (CUDA's order too under CUDA_DEVICE_ORDER=PCI_BUS_ID, and on a machine of one GPU model), GPU UUIDs
/// ("GPU-5e1d7c52-…", or a prefix naming one GPU, as CUDA takes them) or MIG device UUIDs ("MIG-…", or a prefix
/// naming one device). A GPU named whole is ragmig's: all its MIG devices, and ragmig may re-lay it out. A GPU
/// named only by some of its MIG devices keeps those, and its layout is left as it is
/// (GpuDeviceState::layout_fixed). Where CUDA stops at an entry that names no device and quietly drops the rest,
/// this throws ConfigError naming the entry. `device_order` is CUDA_DEVICE_ORDER (null: unset): CUDA numbers GPUs
/// fastest first unless it is PCI_BUS_ID, so on a machine of more than one GPU model an index may name another GPU
/// for CUDA than for NVML; an index there is refused (ConfigError) unless the order is PCI_BUS_ID.
Visibility visible_devices(std::vector<GpuDeviceState> gpus, const char* value, const char* device_order = nullptr);

/// Why a layout_fixed GPU is not re-laid out: what planners and `ragmig mig` print beside it.
inline constexpr const char* kLayoutFixedReason = "CUDA_VISIBLE_DEVICES names only some of its MIG devices";

/// read_devices, then visible_devices with this process's CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER.
Visibility read_visible_devices(const NvmlLibrary& nvml);

}  // namespace ragmig::gpu
