// An emulated NVML driver, so that `ragmig gpus` and `ragmig mig apply --execute` run their NVML code on a
// machine without a GPU: a shared library with the NVML entry points ragmig uses, whose GPUs, MIG mode, GPU
// and compute instances and running processes live in the JSON file named by $NVML_EMULATOR_STATE.
//
// It keeps the driver's rules that an applier must respect, written from NVIDIA's MIG user guide and nvml.h
// independently of ragmig's catalog: profile *indexes* (NVML_GPU_INSTANCE_PROFILE_*) map to profile *ids*,
// a GPU instance is created only at a placement its profile offers, memory slices never overlap, at most 7
// compute slices and max-instances per profile, a GPU instance with compute instances and a compute
// instance with processes cannot be destroyed (NVML_ERROR_IN_USE), MIG changes need MIG mode on. Per GPU
// "faults" inject what a real driver shows: "in_use": N answers the next N changes with NVML_ERROR_IN_USE,
// "no_permission" refuses changes as to a non-root user, "enable_needs_reset" leaves a MIG mode change
// pending until a GPU reset.
//
// Read-only calls never write the file. Each change (and each refused change) is appended to "calls" and
// the file is replaced atomically, so a test sees what a command did and in which order. A file changed by
// someone else (a test, another process) is read again at the next call, as a driver shared by several
// processes would show their changes. Thread-safe, as NVML is; $NVML_EMULATOR_CHANGE_MS makes each MIG change
// take that long, as a real one takes seconds.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using json = nlohmann::json;

// nvmlReturn_t
constexpr int kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3, kNoPermission = 4,
              kNotFound = 6, kInsufficientSize = 7, kResetRequired = 16, kInUse = 19, kInsufficientResources = 23,
              kUnknown = 999;

struct GiProfile {
  unsigned index;          // NVML_GPU_INSTANCE_PROFILE_*
  unsigned id;             // what nvidia-smi -lgip prints
  unsigned slices;         // compute slices
  unsigned memory_slices;  // placement size
  unsigned long long memory_mb;
  unsigned max_count;
  unsigned starts[8];
  unsigned start_count;
};

// The profiles of the two models the tests emulate (NVIDIA MIG user guide, "Supported MIG profiles").
constexpr GiProfile kH200[] = {
    {0, 19, 1, 1, 16384, 7, {0, 1, 2, 3, 4, 5, 6}, 7},  // 1g.18gb
    {7, 20, 1, 1, 16384, 1, {0, 1, 2, 3, 4, 5, 6}, 7},  // 1g.18gb+me
    {9, 15, 1, 2, 32768, 4, {0, 2, 4, 6}, 4},           // 1g.35gb
    {1, 14, 2, 2, 32768, 3, {0, 2, 4}, 3},              // 2g.35gb
    {2, 9, 3, 4, 65536, 2, {0, 4}, 2},                  // 3g.71gb
    {3, 5, 4, 4, 65536, 1, {0}, 1},                     // 4g.71gb
    {4, 0, 7, 8, 139264, 1, {0}, 1},                    // 7g.141gb
};
constexpr GiProfile kA100_40[] = {
    {0, 19, 1, 1, 4864, 7, {0, 1, 2, 3, 4, 5, 6}, 7},  // 1g.5gb
    {7, 20, 1, 1, 4864, 1, {0, 1, 2, 3, 4, 5, 6}, 7},  // 1g.5gb+me
    {9, 15, 1, 2, 9856, 4, {0, 2, 4, 6}, 4},           // 1g.10gb
    {1, 14, 2, 2, 9856, 3, {0, 2, 4}, 3},              // 2g.10gb
    {2, 9, 3, 4, 19968, 2, {0, 4}, 2},                 // 3g.20gb
    {3, 5, 4, 4, 19968, 1, {0}, 1},                    // 4g.20gb
    {4, 0, 7, 8, 40192, 1, {0}, 1},                    // 7g.40gb
};

// A handle is one of these, interned so that the same object always gets the same pointer; it names its
// object by ids and every call looks it up in the state, so a handle of a destroyed instance fails cleanly.
struct Handle {
  enum Kind { Gpu, Mig, GpuInstance, ComputeInstance } kind;
  int gpu;
  int gi;
  int ci;
};

std::deque<Handle> g_handles;
json g_state;
std::string g_path;
bool g_initialised = false;
// Which version of the file was last read or written: inode, size and mtime. Files are replaced by a rename,
// so a new version has a new inode even when the coarse file clock gives it the same mtime.
struct Version {
  ino_t inode = 0;
  off_t size = 0;
  struct timespec mtime = {};
  bool operator==(const Version& o) const {
    return inode == o.inode && size == o.size && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};
Version g_loaded;

Version version_of(const std::string& path) {
  struct stat st = {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_ino, st.st_size, st.st_mtim};
}

bool load() {
  std::ifstream in(g_path);
  if (!in) return false;
  json state;
  try {
    state = json::parse(in);
  } catch (const json::exception&) {
    return false;
  }
  if (!state.contains("gpus") || !state["gpus"].is_array()) return false;
  if (!state.contains("calls")) state["calls"] = json::array();
  g_state = std::move(state);
  g_loaded = version_of(g_path);
  return true;
}

// Initialised, with the file's latest contents.
bool ready() {
  if (!g_initialised) return false;
  if (!(version_of(g_path) == g_loaded)) load();
  return true;
}

Handle* intern(Handle::Kind kind, int gpu, int gi = -1, int ci = -1) {
  for (auto& h : g_handles) {
    if (h.kind == kind && h.gpu == gpu && h.gi == gi && h.ci == ci) return &h;
  }
  g_handles.push_back({kind, gpu, gi, ci});
  return &g_handles.back();
}

Handle* as_handle(void* p) {
  return static_cast<Handle*>(p);
}

bool save() {
  const std::string tmp = g_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return false;
    out << g_state.dump(2) << "\n";
    if (!out.flush()) return false;
  }
  if (std::rename(tmp.c_str(), g_path.c_str()) != 0) return false;
  g_loaded = version_of(g_path);
  return true;
}

json& gpus() {
  return g_state["gpus"];
}

json* gpu_of(const Handle* h) {
  if (!ready() || !h || h->gpu < 0 || static_cast<size_t>(h->gpu) >= gpus().size()) return nullptr;
  return &gpus()[static_cast<size_t>(h->gpu)];
}

std::pair<const GiProfile*, size_t> profiles_of(const json& gpu) {
  const std::string name = gpu.value("name", "");
  if (name.find("H200") != std::string::npos) return {kH200, std::size(kH200)};
  if (name.find("A100") != std::string::npos && name.find("40GB") != std::string::npos)
    return {kA100_40, std::size(kA100_40)};
  return {nullptr, 0};
}

const GiProfile* profile_by_index(const json& gpu, unsigned index) {
  auto [table, n] = profiles_of(gpu);
  for (size_t k = 0; k < n; ++k) {
    if (table[k].index == index) return &table[k];
  }
  return nullptr;
}

const GiProfile* profile_by_id(const json& gpu, unsigned id) {
  auto [table, n] = profiles_of(gpu);
  for (size_t k = 0; k < n; ++k) {
    if (table[k].id == id) return &table[k];
  }
  return nullptr;
}

json& instances(json& gpu) {
  if (!gpu.contains("instances")) gpu["instances"] = json::array();
  return gpu["instances"];
}

json* gi_of(const Handle* h) {
  json* gpu = gpu_of(h);
  if (!gpu || h->gi < 0) return nullptr;
  for (auto& gi : instances(*gpu)) {
    if (gi["gi"].get<int>() == h->gi) return &gi;
  }
  return nullptr;
}

json* ci_of(const Handle* h) {
  json* gi = gi_of(h);
  if (!gi || h->ci < 0 || !gi->contains("cis")) return nullptr;
  for (auto& ci : (*gi)["cis"]) {
    if (ci["ci"].get<int>() == h->ci) return &ci;
  }
  return nullptr;
}

bool mig_on(const json& gpu) {
  return gpu.value("mig_current", 0) == 1;
}

// Records a change (or an attempt) in "calls" and, for a change that the faults let through, returns
// success; an injected fault is consumed and returned instead.
int attempt(json& gpu, const std::string& what) {
  if (!gpu.contains("faults")) gpu["faults"] = json::object();
  json& faults = gpu["faults"];
  int rc = kSuccess;
  if (faults.value("no_permission", false)) {
    rc = kNoPermission;
  } else if (faults.value("in_use", 0) > 0) {
    faults["in_use"] = faults["in_use"].get<int>() - 1;
    rc = kInUse;
  }
  g_state["calls"].push_back(rc == kSuccess ? what : what + " -> " + std::to_string(rc));
  return rc;
}

int finish(json& gpu, const std::string& what, int rc) {
  if (rc != kSuccess) g_state["calls"].push_back(what + " -> " + std::to_string(rc));
  (void)gpu;
  return save() ? rc : kUnknown;
}

int next_id(const json& list, const char* key, int first) {
  for (int id = first;; ++id) {
    bool used = false;
    for (const auto& e : list) used = used || e[key].get<int>() == id;
    if (!used) return id;
  }
}

std::string mig_uuid(int gpu, int gi, int ci, int serial) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "MIG-e0%06x-%04x-%04x-%04x-%012x", serial, gpu, gi, ci, serial * 7919);
  return buf;
}

int copy_text(const std::string& text, char* out, unsigned int length) {
  if (!out) return kInvalidArgument;
  if (text.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

int processes_of(const json& gpu) {
  int n = gpu.value("processes", 0);
  if (gpu.contains("instances")) {
    for (const auto& gi : gpu["instances"]) {
      if (!gi.contains("cis")) continue;
      for (const auto& ci : gi["cis"]) n += ci.value("processes", 0);
    }
  }
  return n;
}

// The MIG devices (compute instances) of a GPU in (GPU instance, compute instance) order.
std::vector<std::pair<int, int>> mig_devices(const json& gpu) {
  std::vector<std::pair<int, int>> out;
  if (!gpu.contains("instances")) return out;
  for (const auto& gi : gpu["instances"]) {
    if (!gi.contains("cis")) continue;
    for (const auto& ci : gi["cis"]) out.emplace_back(gi["gi"].get<int>(), ci["ci"].get<int>());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A driver is called from several threads of one process (ragmig's MIG steps run beside its scheduler
// loop): one lock around every entry point, as the handles and the state are shared.
std::recursive_mutex g_mutex;
struct Lock {
  Lock() { g_mutex.lock(); }
  ~Lock() { g_mutex.unlock(); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
};

// A real driver takes seconds per MIG change: $NVML_EMULATOR_CHANGE_MS makes each change (made or refused)
// take that long, slept before the lock so that other threads' calls go on meanwhile.
void pause_for_change() {
  if (const char* ms = std::getenv("NVML_EMULATOR_CHANGE_MS"))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
}

}  // namespace


extern "C" {

int nvmlInit_v2() {
  const Lock lock;
  const char* path = std::getenv("NVML_EMULATOR_STATE");
  if (!path || !*path) return kUnknown;
  g_path = path;
  if (!load()) return kUnknown;
  g_initialised = true;
  return kSuccess;
}

int nvmlShutdown() {
  const Lock lock;
  g_initialised = false;
  return kSuccess;
}

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case kSuccess:
      return "Success";
    case kUninitialized:
      return "Uninitialized";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotSupported:
      return "Not Supported";
    case kNoPermission:
      return "Insufficient Permissions";
    case kNotFound:
      return "Not Found";
    case kInsufficientSize:
      return "Insufficient Size";
    case kResetRequired:
      return "GPU requires reset";
    case kInUse:
      return "In use by another client";
    case kInsufficientResources:
      return "Insufficient resources";
  }
  return "Unknown Error";
}

int nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  const Lock lock;
  if (!ready()) return kUninitialized;
  return copy_text(g_state.value("driver_version", "570.86.15"), version, length);
}

int nvmlDeviceGetCount_v2(unsigned int* count) {
  const Lock lock;
  if (!ready()) return kUninitialized;
  if (!count) return kInvalidArgument;
  *count = static_cast<unsigned>(gpus().size());
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  const Lock lock;
  if (!ready()) return kUninitialized;
  if (!device || index >= gpus().size()) return kInvalidArgument;
  *device = intern(Handle::Gpu, static_cast<int>(index));
  return kSuccess;
}

// A GPU's UUID gives its handle, a MIG device's UUID the MIG device's (as drivers from R470 do).
int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) {
  const Lock lock;
  if (!ready()) return kUninitialized;
  if (!uuid || !device) return kInvalidArgument;
  for (size_t g = 0; g < gpus().size(); ++g) {
    const json& gpu = gpus()[g];
    if (gpu.value("uuid", "") == uuid) {
      *device = intern(Handle::Gpu, static_cast<int>(g));
      return kSuccess;
    }
    if (!gpu.contains("instances")) continue;
    for (const auto& gi : gpu["instances"]) {
      if (!gi.contains("cis")) continue;
      for (const auto& ci : gi["cis"]) {
        if (ci.value("uuid", "") == uuid) {
          *device = intern(Handle::Mig, static_cast<int>(g), gi["gi"].get<int>(), ci["ci"].get<int>());
          return kSuccess;
        }
      }
    }
  }
  return kNotFound;
}

int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  const Lock lock;
  const Handle* h = as_handle(device);
  json* gpu = gpu_of(h);
  if (!gpu) return kInvalidArgument;
  if (h->kind == Handle::Mig) {
    json* gi = gi_of(h);
    if (!gi) return kNotFound;
    return copy_text((*gpu)["name"].get<std::string>() + " MIG", name, length);
  }
  return copy_text((*gpu)["name"].get<std::string>(), name, length);
}

int nvmlDeviceGetUUID(void* device, char* uuid, unsigned int length) {
  const Lock lock;
  const Handle* h = as_handle(device);
  json* gpu = gpu_of(h);
  if (!gpu) return kInvalidArgument;
  if (h->kind == Handle::Mig) {
    json* ci = ci_of(h);
    return ci ? copy_text((*ci)["uuid"].get<std::string>(), uuid, length) : kNotFound;
  }
  return copy_text((*gpu)["uuid"].get<std::string>(), uuid, length);
}

struct Memory {
  unsigned long long total, free, used;
};

int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  const Lock lock;
  const Handle* h = as_handle(device);
  json* gpu = gpu_of(h);
  if (!gpu || !memory) return kInvalidArgument;
  constexpr unsigned long long kMiB = 1024ull * 1024ull;
  if (h->kind == Handle::Mig) {
    json* gi = gi_of(h);
    json* ci = ci_of(h);
    if (!gi || !ci) return kNotFound;
    const GiProfile* p = profile_by_id(*gpu, (*gi)["profile_id"].get<unsigned>());
    memory->total = (p ? p->memory_mb : 0) * kMiB;
    memory->used = ci->value("memory_used_mib", 0ull) * kMiB;
  } else {
    memory->total = gpu->value("memory_mib", 0ull) * kMiB;
    memory->used = gpu->value("memory_used_mib", 0ull) * kMiB;
  }
  memory->free = memory->total > memory->used ? memory->total - memory->used : 0;
  return kSuccess;
}

struct Utilization {
  unsigned int gpu, memory;
};

int nvmlDeviceGetUtilizationRates(void* device, Utilization* util) {
  const Lock lock;
  const Handle* h = as_handle(device);
  json* gpu = gpu_of(h);
  if (!gpu || !util) return kInvalidArgument;
  const json* source = gpu;
  if (h->kind == Handle::Mig) source = ci_of(h);  // drivers rarely say per MIG device: only when the state does
  if (!source || !source->contains("utilisation_gpu")) return kNotSupported;
  util->gpu = (*source)["utilisation_gpu"].get<unsigned>();
  util->memory = source->value("utilisation_memory", 0u);
  return kSuccess;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count, void* infos) {
  const Lock lock;
  const Handle* h = as_handle(device);
  json* gpu = gpu_of(h);
  if (!gpu || !count) return kInvalidArgument;
  int n = 0;
  if (h->kind == Handle::Mig) {
    json* ci = ci_of(h);
    if (!ci) return kNotFound;
    n = ci->value("processes", 0);
  } else {
    n = processes_of(*gpu);
  }
  const unsigned have = *count;
  *count = static_cast<unsigned>(n);
  if (static_cast<unsigned>(n) > have || (n > 0 && !infos)) return kInsufficientSize;
  return kSuccess;  // the tests never ask for the entries themselves
}

int nvmlDeviceGetMigMode(void* device, unsigned int* current, unsigned int* pending) {
  const Lock lock;
  json* gpu = gpu_of(as_handle(device));
  if (!gpu || !current || !pending) return kInvalidArgument;
  if (!gpu->value("mig_capable", true) || !profiles_of(*gpu).first) return kNotSupported;
  *current = gpu->value("mig_current", 0u);
  *pending = gpu->value("mig_pending", *current);
  return kSuccess;
}

int nvmlDeviceSetMigMode(void* device, unsigned int mode, int* activation) {
  pause_for_change();
  const Lock lock;
  json* gpu = gpu_of(as_handle(device));
  if (!gpu || !activation || mode > 1) return kInvalidArgument;
  if (!gpu->value("mig_capable", true) || !profiles_of(*gpu).first) return kNotSupported;
  const std::string what =
      "set_mig_mode gpu=" + std::to_string(as_handle(device)->gpu) + " mode=" + std::to_string(mode);
  if (gpu->value("faults", json::object()).value("no_permission", false)) {
    g_state["calls"].push_back(what + " -> " + std::to_string(kNoPermission));
    return save() ? kNoPermission : kUnknown;
  }
  if (processes_of(*gpu) > 0) return finish(*gpu, what, kInUse);
  g_state["calls"].push_back(what);
  (*gpu)["mig_pending"] = mode;
  if (gpu->value("faults", json::object()).value("enable_needs_reset", false)) {
    *activation = kResetRequired;
  } else {
    (*gpu)["mig_current"] = mode;
    *activation = kSuccess;
  }
  return save() ? kSuccess : kUnknown;
}

struct GpuInstanceProfileInfo {
  unsigned int id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount, copyEngineCount, decoderCount,
      encoderCount, jpegCount, ofaCount;
  unsigned long long memorySizeMB;
};

int nvmlDeviceGetGpuInstanceProfileInfo(void* device, unsigned int profile, GpuInstanceProfileInfo* info) {
  const Lock lock;
  json* gpu = gpu_of(as_handle(device));
  if (!gpu || !info) return kInvalidArgument;
  const GiProfile* p = profile_by_index(*gpu, profile);
  if (!p) return kNotSupported;
  *info = {};
  info->id = p->id;
  info->sliceCount = p->slices;
  info->instanceCount = p->max_count;
  info->multiprocessorCount = p->slices * 16;
  info->memorySizeMB = p->memory_mb;
  return kSuccess;
}

struct Placement {
  unsigned int start, size;
};

int nvmlDeviceGetGpuInstancePossiblePlacements_v2(void* device, unsigned int profile_id, Placement* placements,
                                                  unsigned int* count) {
  const Lock lock;
  json* gpu = gpu_of(as_handle(device));
  if (!gpu || !count) return kInvalidArgument;
  const GiProfile* p = profile_by_id(*gpu, profile_id);
  if (!p) return kInvalidArgument;
  if (!placements) {
    *count = p->start_count;
    return kSuccess;
  }
  if (*count < p->start_count) return kInsufficientSize;
  for (unsigned k = 0; k < p->start_count; ++k) placements[k] = {p->starts[k], p->memory_slices};
  *count = p->start_count;
  return kSuccess;
}

int nvmlDeviceGetGpuInstances(void* device, unsigned int profile_id, void** out, unsigned int* count) {
  const Lock lock;
  const Handle* h = as_handle(device);
  json* gpu = gpu_of(h);
  if (!gpu || !out || !count) return kInvalidArgument;
  const GiProfile* p = profile_by_id(*gpu, profile_id);
  if (!p) return kInvalidArgument;
  if (!mig_on(*gpu)) return kNotSupported;
  unsigned n = 0;
  for (const auto& gi : instances(*gpu)) {
    if (gi["profile_id"].get<unsigned>() != profile_id) continue;
    if (n >= p->max_count) return kInsufficientSize;  // the caller must size the buffer by instanceCount
    out[n++] = intern(Handle::GpuInstance, h->gpu, gi["gi"].get<int>());
  }
  *count = n;
  return kSuccess;
}

int nvmlDeviceGetGpuInstanceById(void* device, unsigned int id, void** out) {
  const Lock lock;
  const Handle* h = as_handle(device);
  json* gpu = gpu_of(h);
  if (!gpu || !out) return kInvalidArgument;
  if (!mig_on(*gpu)) return kNotSupported;
  for (const auto& gi : instances(*gpu)) {
    if (gi["gi"].get<unsigned>() == id) {
      *out = intern(Handle::GpuInstance, h->gpu, static_cast<int>(id));
      return kSuccess;
    }
  }
  return kNotFound;
}

struct GpuInstanceInfo {
  void* device;
  unsigned int id, profileId;
  Placement placement;
};

int nvmlGpuInstanceGetInfo(void* instance, GpuInstanceInfo* info) {
  const Lock lock;
  const Handle* h = as_handle(instance);
  json* gi = h && h->kind == Handle::GpuInstance ? gi_of(h) : nullptr;
  if (!gi || !info) return kInvalidArgument;
  info->device = intern(Handle::Gpu, h->gpu);
  info->id = (*gi)["gi"].get<unsigned>();
  info->profileId = (*gi)["profile_id"].get<unsigned>();
  info->placement = {(*gi)["start"].get<unsigned>(), (*gi)["size"].get<unsigned>()};
  return kSuccess;
}

int nvmlDeviceCreateGpuInstanceWithPlacement(void* device, unsigned int profile_id, const Placement* placement,
                                             void** out) {
  pause_for_change();
  const Lock lock;
  const Handle* h = as_handle(device);
  json* gpu = gpu_of(h);
  if (!gpu || !placement || !out) return kInvalidArgument;
  const std::string what = "create_gi gpu=" + std::to_string(h->gpu) + " profile=" + std::to_string(profile_id) +
                           " start=" + std::to_string(placement->start);
  if (!mig_on(*gpu)) return finish(*gpu, what, kNotSupported);
  const GiProfile* p = profile_by_id(*gpu, profile_id);
  if (!p) return finish(*gpu, what, kInvalidArgument);
  bool offered = false;
  for (unsigned k = 0; k < p->start_count; ++k) offered = offered || p->starts[k] == placement->start;
  if (!offered || placement->size != p->memory_slices) return finish(*gpu, what, kInvalidArgument);
  unsigned slices = p->slices;
  unsigned same = 0;
  for (const auto& gi : instances(*gpu)) {
    const unsigned s = gi["start"].get<unsigned>();
    const unsigned e = s + gi["size"].get<unsigned>();
    if (placement->start < e && s < placement->start + placement->size)
      return finish(*gpu, what, kInsufficientResources);
    const GiProfile* q = profile_by_id(*gpu, gi["profile_id"].get<unsigned>());
    slices += q ? q->slices : 0;
    if (gi["profile_id"].get<unsigned>() == profile_id) ++same;
  }
  if (slices > 7 || same >= p->max_count) return finish(*gpu, what, kInsufficientResources);
  if (const int rc = attempt(*gpu, what); rc != kSuccess) return save() ? rc : kUnknown;
  const int id = next_id(instances(*gpu), "gi", 1);
  instances(*gpu).push_back({{"gi", id},
                             {"profile_id", profile_id},
                             {"start", placement->start},
                             {"size", placement->size},
                             {"cis", json::array()}});
  *out = intern(Handle::GpuInstance, h->gpu, id);
  return save() ? kSuccess : kUnknown;
}

int nvmlGpuInstanceDestroy(void* instance) {
  pause_for_change();
  const Lock lock;
  const Handle* h = as_handle(instance);
  json* gi = h && h->kind == Handle::GpuInstance ? gi_of(h) : nullptr;
  if (!gi) return kInvalidArgument;
  json& gpu = *gpu_of(h);
  const std::string what = "destroy_gi gpu=" + std::to_string(h->gpu) + " gi=" + std::to_string(h->gi);
  if (!(*gi)["cis"].empty()) return finish(gpu, what, kInUse);  // its compute instances go first
  if (const int rc = attempt(gpu, what); rc != kSuccess) return save() ? rc : kUnknown;
  json& list = instances(gpu);
  for (size_t k = 0; k < list.size(); ++k) {
    if (list[k]["gi"].get<int>() == h->gi) {
      list.erase(k);
      break;
    }
  }
  return save() ? kSuccess : kUnknown;
}

struct ComputeInstanceProfileInfo {
  unsigned int id, sliceCount, instanceCount, multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount,
      sharedEncoderCount, sharedJpegCount, sharedOfaCount;
};

// NVML_COMPUTE_INSTANCE_PROFILE_* index -> compute slices.
unsigned ci_slices(unsigned profile) {
  constexpr unsigned kSlices[] = {1, 2, 3, 4, 7, 8, 6};
  return profile < std::size(kSlices) ? kSlices[profile] : 0;
}

int nvmlGpuInstanceGetComputeInstanceProfileInfo(void* instance, unsigned int profile, unsigned int engine,
                                                 ComputeInstanceProfileInfo* info) {
  const Lock lock;
  const Handle* h = as_handle(instance);
  json* gi = h && h->kind == Handle::GpuInstance ? gi_of(h) : nullptr;
  if (!gi || !info || engine != 0) return kInvalidArgument;
  const GiProfile* p = profile_by_id(*gpu_of(h), (*gi)["profile_id"].get<unsigned>());
  const unsigned slices = ci_slices(profile);
  if (!p || slices == 0 || slices > p->slices || slices == 8) return kNotSupported;
  *info = {};
  info->id = profile;
  info->sliceCount = slices;
  info->instanceCount = p->slices / slices;
  info->multiprocessorCount = slices * 16;
  return kSuccess;
}

int nvmlGpuInstanceCreateComputeInstance(void* instance, unsigned int profile_id, void** out) {
  pause_for_change();
  const Lock lock;
  const Handle* h = as_handle(instance);
  json* gi = h && h->kind == Handle::GpuInstance ? gi_of(h) : nullptr;
  if (!gi || !out) return kInvalidArgument;
  json& gpu = *gpu_of(h);
  const std::string what = "create_ci gpu=" + std::to_string(h->gpu) + " gi=" + std::to_string(h->gi) +
                           " profile=" + std::to_string(profile_id);
  const GiProfile* p = profile_by_id(gpu, (*gi)["profile_id"].get<unsigned>());
  const unsigned slices = ci_slices(profile_id);
  if (!p || slices == 0 || slices > p->slices) return finish(gpu, what, kInvalidArgument);
  unsigned used = slices;
  for (const auto& ci : (*gi)["cis"]) used += ci_slices(ci["profile_id"].get<unsigned>());
  if (used > p->slices) return finish(gpu, what, kInsufficientResources);
  if (const int rc = attempt(gpu, what); rc != kSuccess) return save() ? rc : kUnknown;
  const int id = next_id((*gi)["cis"], "ci", 0);
  const int serial = g_state.value("uuid_serial", 0) + 1;
  g_state["uuid_serial"] = serial;
  (*gi)["cis"].push_back(
      {{"ci", id}, {"profile_id", profile_id}, {"uuid", mig_uuid(h->gpu, h->gi, id, serial)}, {"processes", 0}});
  *out = intern(Handle::ComputeInstance, h->gpu, h->gi, id);
  return save() ? kSuccess : kUnknown;
}

int nvmlGpuInstanceGetComputeInstances(void* instance, unsigned int profile_id, void** out, unsigned int* count) {
  const Lock lock;
  const Handle* h = as_handle(instance);
  json* gi = h && h->kind == Handle::GpuInstance ? gi_of(h) : nullptr;
  if (!gi || !out || !count) return kInvalidArgument;
  const GiProfile* p = profile_by_id(*gpu_of(h), (*gi)["profile_id"].get<unsigned>());
  const unsigned slices = ci_slices(profile_id);
  if (!p || slices == 0 || slices > p->slices) return kNotSupported;
  unsigned n = 0;
  for (const auto& ci : (*gi)["cis"]) {
    if (ci["profile_id"].get<unsigned>() != profile_id) continue;
    if (n >= p->slices / slices) return kInsufficientSize;
    out[n++] = intern(Handle::ComputeInstance, h->gpu, h->gi, ci["ci"].get<int>());
  }
  *count = n;
  return kSuccess;
}

int nvmlComputeInstanceDestroy(void* instance) {
  pause_for_change();
  const Lock lock;
  const Handle* h = as_handle(instance);
  json* ci = h && h->kind == Handle::ComputeInstance ? ci_of(h) : nullptr;
  if (!ci) return kInvalidArgument;
  json& gpu = *gpu_of(h);
  const std::string what =
      "destroy_ci gpu=" + std::to_string(h->gpu) + " gi=" + std::to_string(h->gi) + " ci=" + std::to_string(h->ci);
  if (ci->value("processes", 0) > 0) return finish(gpu, what, kInUse);
  if (const int rc = attempt(gpu, what); rc != kSuccess) return save() ? rc : kUnknown;
  json& cis = (*gi_of(h))["cis"];
  for (size_t k = 0; k < cis.size(); ++k) {
    if (cis[k]["ci"].get<int>() == h->ci) {
      cis.erase(k);
      break;
    }
  }
  return save() ? kSuccess : kUnknown;
}

int nvmlDeviceGetMaxMigDeviceCount(void* device, unsigned int* count) {
  const Lock lock;
  json* gpu = gpu_of(as_handle(device));
  if (!gpu || !count) return kInvalidArgument;
  if (!profiles_of(*gpu).first) return kNotSupported;
  *count = 7;
  return kSuccess;
}

int nvmlDeviceGetMigDeviceHandleByIndex(void* device, unsigned int index, void** out) {
  const Lock lock;
  const Handle* h = as_handle(device);
  json* gpu = gpu_of(h);
  if (!gpu || !out || h->kind != Handle::Gpu) return kInvalidArgument;
  if (!mig_on(*gpu)) return kNotSupported;
  const auto devices = mig_devices(*gpu);
  if (index >= devices.size()) return kNotFound;
  *out = intern(Handle::Mig, h->gpu, devices[index].first, devices[index].second);
  return kSuccess;
}

int nvmlDeviceGetGpuInstanceId(void* device, unsigned int* id) {
  const Lock lock;
  const Handle* h = as_handle(device);
  if (!h || h->kind != Handle::Mig || !id || !ci_of(h)) return kInvalidArgument;
  *id = static_cast<unsigned>(h->gi);
  return kSuccess;
}

int nvmlDeviceGetComputeInstanceId(void* device, unsigned int* id) {
  const Lock lock;
  const Handle* h = as_handle(device);
  if (!h || h->kind != Handle::Mig || !id || !ci_of(h)) return kInvalidArgument;
  *id = static_cast<unsigned>(h->ci);
  return kSuccess;
}

}  // extern "C"
