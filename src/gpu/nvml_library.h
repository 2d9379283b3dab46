// NVML loaded at run time: dlopen of libnvidia-ml.so.1 (or $RAGMIG_NVML_LIBRARY), symbol lookup, nvmlInit
// and nvmlShutdown tied to one object's lifetime, and NVML return codes turned into DeviceError.
// Machines without a GPU have no such library; try_open tells that apart from a library that is broken.
#pragma once

#include <memory>
#include <string>

#include "gpu/nvml_api.h"

namespace ragmig::gpu {

/// Environment variable that names another NVML library file (tests point it at a missing or non-NVML file).
inline constexpr const char* kNvmlLibraryEnv = "RAGMIG_NVML_LIBRARY";
inline constexpr const char* kNvmlDefaultLibrary = "libnvidia-ml.so.1";

/// How an attempt to open NVML ended, for reports ("absent" is normal on CPU-only machines).
enum class NvmlStatus { Available, Absent, Broken, InitFailed };
const char* to_string(NvmlStatus status);

class NvmlLibrary {
 public:
  /// $RAGMIG_NVML_LIBRARY when set and non-empty, else libnvidia-ml.so.1.
  static std::string default_path();

  /// Loads `path`, resolves the symbols and calls nvmlInit_v2. Throws DeviceError saying which step failed.
  explicit NvmlLibrary(const std::string& path);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  /// Like the constructor, but returns null with `status` and `why` set instead of throwing.
  static std::unique_ptr<NvmlLibrary> try_open(const std::string& path, NvmlStatus* status, std::string* why);

  const nvml::Api& api() const { return api_; }
  const std::string& path() const { return path_; }

  /// NVML's own text for a return code ("In use by another client").
  std::string error_string(nvml::Return rc) const;
  /// Throws DeviceError "`what`: <nvml text> (NVML error <rc>)" unless rc is success.
  void check(nvml::Return rc, const std::string& what) const;

 private:
  void* handle_ = nullptr;
  bool initialised_ = false;
  std::string path_;
  nvml::Api api_;
};

}  // namespace ragmig::gpu
