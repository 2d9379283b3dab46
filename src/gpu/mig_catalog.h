// The MIG profile catalog: for each supported GPU model (A30-24GB, A100-40GB, A100-80GB, H100-80GB,
// H200-141GB) its profiles with NVIDIA's profile ids, compute and memory slices, memory, instance limits
// and the memory slices where an instance may start. Lookups by device name ("NVIDIA H200") and profile name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ragmig::gpu {

/// One GPU instance profile, as `nvidia-smi mig -lgip` and `-lgipp` describe it.
struct MigProfile {
  std::string name;          ///< "1g.18gb", "1g.18gb+me"
  int id = 0;                ///< the profile id of `nvidia-smi mig -lgip` (19, 20, 15, 14, 9, 5, 0)
  unsigned nvml_index = 0;   ///< NVML_GPU_INSTANCE_PROFILE_* that nvmlDeviceGetGpuInstanceProfileInfo takes
  int compute_slices = 0;    ///< of the GPU's compute slices (7, or 4 on the A30)
  int memory_slices = 0;     ///< of the GPU's memory slices (8, or 4 on the A30): the placement size
  int64_t memory_mib = 0;    ///< usable memory, rounded from `nvidia-smi mig -lgip`; NVML has the exact value
  int max_instances = 0;     ///< most instances of this profile on one GPU
  std::vector<int> starts;   ///< memory slices where an instance may begin (`-lgipp`)

  bool media_extensions() const;  ///< a "+me" profile (takes the GPU's one set of media engines)
};

/// A GPU model that supports MIG, with its profiles ordered largest first.
struct GpuCatalog {
  std::string name;          ///< "H200-141GB"
  std::string family;        ///< "H200"
  int memory_gb = 0;         ///< the size in the product name, which tells A100-40GB from A100-80GB
  int compute_slices = 7;
  int memory_slices = 8;
  std::vector<MigProfile> profiles;

  /// The profile named `name` ("1g.18gb"), or null.
  const MigProfile* find_profile(std::string_view name) const;
  /// Index of the profile named `name` in `profiles`; throws ConfigError listing this GPU's profiles.
  int profile_index(std::string_view name) const;
  const MigProfile& profile(std::string_view name) const { return profiles[static_cast<size_t>(profile_index(name))]; }
  /// Index of the profile with `nvidia-smi` id `id`, or -1.
  int profile_index_by_id(int id) const;
  /// "1g.18gb, 1g.18gb+me, ..." for messages.
  std::string profile_names() const;
};

/// Every GPU model in the catalog.
const std::vector<GpuCatalog>& gpu_catalogs();

/// The catalog for a device or model name: "NVIDIA H200", "H200", "H200-141GB", "NVIDIA A100-SXM4-40GB",
/// "A100-80GB". Where the name does not tell the memory size (e.g. "NVIDIA A100-PCIE"), `total_memory_mib`
/// (from NVML) decides. Null when the model is unknown or ambiguous.
const GpuCatalog* find_gpu_catalog(std::string_view gpu_name, int64_t total_memory_mib = 0);
/// Like find_gpu_catalog but throws ConfigError naming the known models.
const GpuCatalog& gpu_catalog(std::string_view gpu_name, int64_t total_memory_mib = 0);

/// The parts of a MIG profile name: "<compute>g.<memory>gb[+me]".
struct ProfileName {
  int compute_slices = 0;
  int memory_gb = 0;
  bool media_extensions = false;
  bool operator==(const ProfileName&) const = default;
};
/// Parses "1g.18gb" or "1g.18gb+me"; throws ConfigError saying what was expected.
ProfileName parse_profile_name(std::string_view text);
std::string to_string(const ProfileName& name);
/// True when `text` has the shape of a profile name, <1-7>g.<memory>gb[+me] (whether or not any GPU offers it).
bool looks_like_profile_name(std::string_view text);

}  // namespace ragmig::gpu
