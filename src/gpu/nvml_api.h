// The slice of NVML's C API that ragmig uses, declared here because no NVML headers are installed: the
// library is dlopen'ed at run time (nvml_library.h). Layouts follow NVIDIA's nvml.h (R470 and later);
// each struct is only ever written by the library, so a struct that is larger than the driver's is harmless.
#pragma once

#include <cstdint>

namespace ragmig::gpu::nvml {

using Return = int;  // nvmlReturn_t
using Device = struct DeviceOpaque*;
using GpuInstance = struct GpuInstanceOpaque*;
using ComputeInstance = struct ComputeInstanceOpaque*;

// nvmlReturn_t values that ragmig tells apart.
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorInUse = 19;  // transient while a MIG instance is being torn down
inline constexpr Return kErrorInsufficientResources = 23;

inline constexpr unsigned kDeviceNameBufferSize = 96;   // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kDeviceUuidBufferSize = 96;   // NVML_DEVICE_UUID_V2_BUFFER_SIZE (80 before v2)
inline constexpr unsigned kSystemDriverVersionBufferSize = 80;

inline constexpr unsigned kDeviceMigDisable = 0;  // NVML_DEVICE_MIG_DISABLE
inline constexpr unsigned kDeviceMigEnable = 1;   // NVML_DEVICE_MIG_ENABLE

// NVML_GPU_INSTANCE_PROFILE_* are indexes into the driver's profile table, not the profile ids that
// `nvidia-smi mig -lgip` prints; nvmlDeviceGetGpuInstanceProfileInfo maps one to the other.
inline constexpr unsigned kGpuInstanceProfile1Slice = 0;
inline constexpr unsigned kGpuInstanceProfile2Slice = 1;
inline constexpr unsigned kGpuInstanceProfile3Slice = 2;
inline constexpr unsigned kGpuInstanceProfile4Slice = 3;
inline constexpr unsigned kGpuInstanceProfile7Slice = 4;
inline constexpr unsigned kGpuInstanceProfile8Slice = 5;
inline constexpr unsigned kGpuInstanceProfile6Slice = 6;
inline constexpr unsigned kGpuInstanceProfile1SliceRev1 = 7;  // 1g with media extensions (+me)
inline constexpr unsigned kGpuInstanceProfile2SliceRev1 = 8;  // 2g with media extensions (+me)
inline constexpr unsigned kGpuInstanceProfile1SliceRev2 = 9;  // 1g with twice the memory
inline constexpr unsigned kGpuInstanceProfileCount = 10;

// NVML_COMPUTE_INSTANCE_PROFILE_* indexes; ragmig makes one compute instance that spans its GPU instance.
inline constexpr unsigned kComputeInstanceProfile1Slice = 0;
inline constexpr unsigned kComputeInstanceProfile2Slice = 1;
inline constexpr unsigned kComputeInstanceProfile3Slice = 2;
inline constexpr unsigned kComputeInstanceProfile4Slice = 3;
inline constexpr unsigned kComputeInstanceProfile7Slice = 4;
inline constexpr unsigned kComputeInstanceProfile8Slice = 5;
inline constexpr unsigned kComputeInstanceProfile6Slice = 6;
inline constexpr unsigned kComputeInstanceProfileCount = 8;
inline constexpr unsigned kComputeInstanceEngineProfileShared = 0;

struct Memory {  // nvmlMemory_t, bytes
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct Utilization {  // nvmlUtilization_t, percent over the last sample period
  unsigned int gpu;
  unsigned int memory;
};

struct GpuInstancePlacement {  // nvmlGpuInstancePlacement_t, in memory slices
  unsigned int start;
  unsigned int size;
};

struct GpuInstanceProfileInfo {  // nvmlGpuInstanceProfileInfo_t
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
};

struct GpuInstanceInfo {  // nvmlGpuInstanceInfo_t
  Device device;
  unsigned int id;
  unsigned int profileId;
  GpuInstancePlacement placement;
};

struct ComputeInstanceProfileInfo {  // nvmlComputeInstanceProfileInfo_t
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
};

// Function types, one per symbol looked up with dlsym (nvml_library.cpp lists the symbol names).
extern "C" {
using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using SystemGetDriverVersionFn = Return (*)(char*, unsigned int);
using DeviceGetCountFn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceGetHandleByUuidFn = Return (*)(const char* uuid, Device*);  // GPU or MIG device UUID
using DeviceGetNameFn = Return (*)(Device, char*, unsigned int);
using DeviceGetUuidFn = Return (*)(Device, char*, unsigned int);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
using DeviceGetMigModeFn = Return (*)(Device, unsigned int* current, unsigned int* pending);
using DeviceSetMigModeFn = Return (*)(Device, unsigned int mode, Return* activation_status);
using DeviceGetGpuInstanceProfileInfoFn = Return (*)(Device, unsigned int profile, GpuInstanceProfileInfo*);
using DeviceGetGpuInstancePossiblePlacementsFn = Return (*)(Device, unsigned int profile_id, GpuInstancePlacement*,
                                                            unsigned int* count);
using DeviceCreateGpuInstanceWithPlacementFn = Return (*)(Device, unsigned int profile_id,
                                                          const GpuInstancePlacement*, GpuInstance*);
using DeviceGetGpuInstancesFn = Return (*)(Device, unsigned int profile_id, GpuInstance*, unsigned int* count);
using DeviceGetGpuInstanceByIdFn = Return (*)(Device, unsigned int id, GpuInstance*);
using GpuInstanceGetInfoFn = Return (*)(GpuInstance, GpuInstanceInfo*);
using GpuInstanceDestroyFn = Return (*)(GpuInstance);
using GpuInstanceGetComputeInstanceProfileInfoFn = Return (*)(GpuInstance, unsigned int profile,
                                                              unsigned int eng_profile, ComputeInstanceProfileInfo*);
using GpuInstanceCreateComputeInstanceFn = Return (*)(GpuInstance, unsigned int profile_id, ComputeInstance*);
using GpuInstanceGetComputeInstancesFn = Return (*)(GpuInstance, unsigned int profile_id, ComputeInstance*,
                                                    unsigned int* count);
using ComputeInstanceDestroyFn = Return (*)(ComputeInstance);
using DeviceGetMaxMigDeviceCountFn = Return (*)(Device, unsigned int*);
using DeviceGetMigDeviceHandleByIndexFn = Return (*)(Device, unsigned int index, Device*);
using DeviceGetGpuInstanceIdFn = Return (*)(Device, unsigned int*);
using DeviceGetComputeInstanceIdFn = Return (*)(Device, unsigned int*);
// Called with a zero count and no buffer only, to learn whether processes run, so the element layout
// (which changed between versions) never matters.
using DeviceGetComputeRunningProcessesFn = Return (*)(Device, unsigned int* count, void* infos);
}

/// The resolved entry points. Required ones are non-null once NvmlLibrary is constructed; the optional
/// ones (marked) may be null on old drivers and callers check.
struct Api {
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;
  SystemGetDriverVersionFn system_get_driver_version = nullptr;
  DeviceGetCountFn device_get_count = nullptr;
  DeviceGetHandleByIndexFn device_get_handle_by_index = nullptr;
  DeviceGetNameFn device_get_name = nullptr;
  DeviceGetUuidFn device_get_uuid = nullptr;
  DeviceGetMemoryInfoFn device_get_memory_info = nullptr;
  DeviceGetUtilizationRatesFn device_get_utilization_rates = nullptr;
  DeviceGetHandleByUuidFn device_get_handle_by_uuid = nullptr;  // optional
  // MIG entry points: optional, absent before R450.
  DeviceGetMigModeFn device_get_mig_mode = nullptr;
  DeviceSetMigModeFn device_set_mig_mode = nullptr;
  DeviceGetGpuInstanceProfileInfoFn device_get_gpu_instance_profile_info = nullptr;
  DeviceGetGpuInstancePossiblePlacementsFn device_get_gpu_instance_possible_placements = nullptr;
  DeviceCreateGpuInstanceWithPlacementFn device_create_gpu_instance_with_placement = nullptr;
  DeviceGetGpuInstancesFn device_get_gpu_instances = nullptr;
  DeviceGetGpuInstanceByIdFn device_get_gpu_instance_by_id = nullptr;
  GpuInstanceGetInfoFn gpu_instance_get_info = nullptr;
  GpuInstanceDestroyFn gpu_instance_destroy = nullptr;
  GpuInstanceGetComputeInstanceProfileInfoFn gpu_instance_get_compute_instance_profile_info = nullptr;
  GpuInstanceCreateComputeInstanceFn gpu_instance_create_compute_instance = nullptr;
  GpuInstanceGetComputeInstancesFn gpu_instance_get_compute_instances = nullptr;
  ComputeInstanceDestroyFn compute_instance_destroy = nullptr;
  DeviceGetMaxMigDeviceCountFn device_get_max_mig_device_count = nullptr;
  DeviceGetMigDeviceHandleByIndexFn device_get_mig_device_handle_by_index = nullptr;
  DeviceGetGpuInstanceIdFn device_get_gpu_instance_id = nullptr;
  DeviceGetComputeInstanceIdFn device_get_compute_instance_id = nullptr;
  DeviceGetComputeRunningProcessesFn device_get_compute_running_processes = nullptr;  // optional

  /// True when every MIG entry point that planning and applying need was found.
  bool has_mig() const {
    return device_get_mig_mode && device_set_mig_mode && device_get_gpu_instance_profile_info &&
           device_create_gpu_instance_with_placement && device_get_gpu_instances && device_get_gpu_instance_by_id &&
           gpu_instance_get_info && gpu_instance_destroy && gpu_instance_get_compute_instance_profile_info &&
           gpu_instance_create_compute_instance && gpu_instance_get_compute_instances && compute_instance_destroy &&
           device_get_max_mig_device_count && device_get_mig_device_handle_by_index && device_get_gpu_instance_id &&
           device_get_compute_instance_id;
  }
};

}  // namespace ragmig::gpu::nvml
