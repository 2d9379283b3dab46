// dlopen/dlsym of NVML and its init/shutdown. Versioned symbols (_v2) are preferred because the
// unversioned ones keep old semantics (nvmlInit ignores GPUs the process cannot access; _v2 does not).
#include "gpu/nvml_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>

#include "core/error.h"

namespace ragmig::gpu {
namespace {

// A DeviceError that remembers which NvmlStatus it stands for, so try_open can report it.
class OpenError : public DeviceError {
 public:
  OpenError(NvmlStatus status, const std::string& what) : DeviceError(what), status_(status) {}
  NvmlStatus status() const { return status_; }

 private:
  NvmlStatus status_;
};

// The first of `names` that the library exports, or null.
void* lookup(void* handle, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* sym = ::dlsym(handle, name)) return sym;
  }
  return nullptr;
}

template <typename Fn>
void bind(void* handle, Fn& slot, std::initializer_list<const char*> names) {
  slot = reinterpret_cast<Fn>(lookup(handle, names));
}

template <typename Fn>
void bind_required(void* handle, const std::string& path, Fn& slot, std::initializer_list<const char*> names) {
  bind(handle, slot, names);
  if (!slot) {
    throw OpenError(NvmlStatus::Broken, path + " is not a usable NVML library: it lacks the symbol " +
                                            std::string(*names.begin()));
  }
}

}  // namespace

const char* to_string(NvmlStatus status) {
  switch (status) {
    case NvmlStatus::Available: return "available";
    case NvmlStatus::Absent: return "absent";
    case NvmlStatus::Broken: return "broken";
    case NvmlStatus::InitFailed: return "init_failed";
  }
  return "unknown";
}

std::string NvmlLibrary::default_path() {
  const char* env = std::getenv(kNvmlLibraryEnv);
  return (env && *env) ? std::string(env) : std::string(kNvmlDefaultLibrary);
}

NvmlLibrary::NvmlLibrary(const std::string& path) : path_(path) {
  // RTLD_LOCAL keeps NVML's symbols out of the global namespace, where they could shadow a CUDA runtime's.
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* err = ::dlerror();
    throw OpenError(NvmlStatus::Absent, "cannot load NVML (" + path + "): " + (err ? err : "dlopen failed"));
  }
  try {
    bind_required(handle_, path, api_.init, {"nvmlInit_v2", "nvmlInit"});
    bind_required(handle_, path, api_.shutdown, {"nvmlShutdown"});
    bind_required(handle_, path, api_.error_string, {"nvmlErrorString"});
    bind_required(handle_, path, api_.device_get_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
    bind_required(handle_, path, api_.device_get_handle_by_index,
                  {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
    bind_required(handle_, path, api_.device_get_name, {"nvmlDeviceGetName"});
    bind_required(handle_, path, api_.device_get_uuid, {"nvmlDeviceGetUUID"});
    bind_required(handle_, path, api_.device_get_memory_info, {"nvmlDeviceGetMemoryInfo"});
    bind_required(handle_, path, api_.device_get_utilization_rates, {"nvmlDeviceGetUtilizationRates"});
    bind(handle_, api_.system_get_driver_version, {"nvmlSystemGetDriverVersion"});
    bind(handle_, api_.device_get_handle_by_uuid, {"nvmlDeviceGetHandleByUUID"});
    bind(handle_, api_.device_get_mig_mode, {"nvmlDeviceGetMigMode"});
    bind(handle_, api_.device_set_mig_mode, {"nvmlDeviceSetMigMode"});
    bind(handle_, api_.device_get_gpu_instance_profile_info, {"nvmlDeviceGetGpuInstanceProfileInfo"});
    bind(handle_, api_.device_get_gpu_instance_possible_placements,
         {"nvmlDeviceGetGpuInstancePossiblePlacements_v2", "nvmlDeviceGetGpuInstancePossiblePlacements"});
    bind(handle_, api_.device_create_gpu_instance_with_placement, {"nvmlDeviceCreateGpuInstanceWithPlacement"});
    bind(handle_, api_.device_get_gpu_instances, {"nvmlDeviceGetGpuInstances"});
    bind(handle_, api_.device_get_gpu_instance_by_id, {"nvmlDeviceGetGpuInstanceById"});
    bind(handle_, api_.gpu_instance_get_info, {"nvmlGpuInstanceGetInfo"});
    bind(handle_, api_.gpu_instance_destroy, {"nvmlGpuInstanceDestroy"});
    bind(handle_, api_.gpu_instance_get_compute_instance_profile_info,
         {"nvmlGpuInstanceGetComputeInstanceProfileInfo"});
    bind(handle_, api_.gpu_instance_create_compute_instance, {"nvmlGpuInstanceCreateComputeInstance"});
    bind(handle_, api_.gpu_instance_get_compute_instances, {"nvmlGpuInstanceGetComputeInstances"});
    bind(handle_, api_.compute_instance_destroy, {"nvmlComputeInstanceDestroy"});
    bind(handle_, api_.device_get_max_mig_device_count, {"nvmlDeviceGetMaxMigDeviceCount"});
    bind(handle_, api_.device_get_mig_device_handle_by_index, {"nvmlDeviceGetMigDeviceHandleByIndex"});
    bind(handle_, api_.device_get_gpu_instance_id, {"nvmlDeviceGetGpuInstanceId"});
    bind(handle_, api_.device_get_compute_instance_id, {"nvmlDeviceGetComputeInstanceId"});
    bind(handle_, api_.device_get_compute_running_processes,
         {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
          "nvmlDeviceGetComputeRunningProcesses"});

    const nvml::Return rc = api_.init();
    if (rc != nvml::kSuccess) {
      throw OpenError(NvmlStatus::InitFailed,
                      "nvmlInit failed (" + path + "): " + error_string(rc) + " (NVML error " + std::to_string(rc) + ")");
    }
    initialised_ = true;
  } catch (...) {
    ::dlclose(handle_);
    handle_ = nullptr;
    throw;
  }
}

NvmlLibrary::~NvmlLibrary() {
  if (initialised_) api_.shutdown();
  if (handle_) ::dlclose(handle_);
}

std::unique_ptr<NvmlLibrary> NvmlLibrary::try_open(const std::string& path, NvmlStatus* status, std::string* why) {
  try {
    auto lib = std::make_unique<NvmlLibrary>(path);
    if (status) *status = NvmlStatus::Available;
    if (why) why->clear();
    return lib;
  } catch (const OpenError& e) {
    if (status) *status = e.status();
    if (why) *why = e.what();
  }
  return nullptr;
}

std::string NvmlLibrary::error_string(nvml::Return rc) const {
  const char* text = api_.error_string ? api_.error_string(rc) : nullptr;
  return text ? std::string(text) : "NVML error " + std::to_string(rc);
}

void NvmlLibrary::check(nvml::Return rc, const std::string& what) const {
  if (rc == nvml::kSuccess) return;
  throw DeviceError(what + ": " + error_string(rc) + " (NVML error " + std::to_string(rc) + ")");
}

}  // namespace ragmig::gpu
