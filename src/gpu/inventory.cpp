// Building the inventory. GPUs are pinned by UUID rather than index because CUDA numbers devices
// fastest-first by default while NVML numbers them by PCI bus; a UUID means the same device to both.
#include "gpu/inventory.h"

#include <unistd.h>

#include <algorithm>

#include "core/cpu_threads.h"
#include "core/error.h"
#include "gpu/visible_devices.h"

namespace ragmig::gpu {

const char* to_string(SlotKind kind) {
  switch (kind) {
    case SlotKind::Mig: return "mig";
    case SlotKind::Gpu: return "gpu";
    case SlotKind::Cpu: return "cpu";
  }
  return "?";
}

int default_cpu_slots() { return usable_cores(); }

int64_t system_memory_mib() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<int64_t>(pages) * page_size / (1024 * 1024);
}

std::string mig_slot_id(int gpu, const GpuInstanceState& gi, int ci_id) {
  return "mig:" + std::to_string(gpu) + ":" + gi.profile + "@" + std::to_string(gi.placement_start) +
         (ci_id == 0 ? "" : ":ci" + std::to_string(ci_id));
}

std::optional<std::string> mig_slot_profile(const std::string& slot_id) {
  if (slot_id.rfind("mig:", 0) != 0) return std::nullopt;
  const size_t from = slot_id.find(':', 4), at = slot_id.find('@');
  if (from == std::string::npos || at == std::string::npos || at <= from + 1) return std::nullopt;
  return slot_id.substr(from + 1, at - from - 1);
}

std::vector<Slot> slots_from_devices(const std::vector<GpuDeviceState>& gpus) {
  std::vector<Slot> slots;
  for (const auto& g : gpus) {
    if (g.uuid.empty()) continue;  // a GPU NVML could not read
    if (!g.mig_enabled) {
      Slot s;
      s.id = "gpu:" + std::to_string(g.index);
      s.kind = SlotKind::Gpu;
      s.profile = g.name;
      s.memory_mib = g.memory_total_mib;
      s.cuda_visible_devices = g.uuid;
      s.gpu_index = g.index;
      s.busy = g.busy.value_or(false);
      slots.push_back(s);
      continue;
    }
    for (const auto& gi : g.instances) {
      for (const auto& dev : gi.devices) {
        if (dev.uuid.empty()) continue;
        Slot s;
        s.id = mig_slot_id(g.index, gi, dev.ci_id);
        s.kind = SlotKind::Mig;
        s.profile = gi.profile;
        s.memory_mib = dev.memory_total_mib > 0 ? dev.memory_total_mib : gi.memory_mib;
        s.cuda_visible_devices = dev.uuid;
        s.gpu_index = g.index;
        s.busy = dev.busy.value_or(false);
        slots.push_back(s);
      }
    }
  }
  return slots;
}

std::vector<Slot> cpu_slots(int count, int64_t total_memory_mib) {
  std::vector<Slot> slots;
  for (int k = 0; k < count; ++k) {
    Slot s;
    s.id = "cpu:" + std::to_string(k);
    s.kind = SlotKind::Cpu;
    s.profile = "cpu";
    s.memory_mib = count > 0 ? total_memory_mib / count : 0;
    slots.push_back(s);
  }
  return slots;
}

Inventory read_inventory(const InventoryOptions& options) {
  if (options.cpu_slots < 0) throw ConfigError("the number of CPU slots must be 0 (automatic) or more");
  Inventory inv;
  inv.nvml_library = options.nvml_library.empty() ? NvmlLibrary::default_path() : options.nvml_library;
  auto nvml = NvmlLibrary::try_open(inv.nvml_library, &inv.nvml_status, &inv.nvml_detail);
  if (nvml) {
    inv.driver_version = driver_version(*nvml);
    try {
      auto visible = read_visible_devices(*nvml);
      inv.gpus = std::move(visible.gpus);
      inv.visibility = std::move(visible.note);
    } catch (const DeviceError& e) {
      inv.fallback_reason = e.what();
    }
    inv.slots = slots_from_devices(inv.gpus);
  }
  if (!inv.slots.empty() && options.cpu_slots > 0) {  // asked for by name: offered beside the GPUs
    auto cpus = cpu_slots(options.cpu_slots, system_memory_mib());
    inv.slots.insert(inv.slots.end(), cpus.begin(), cpus.end());
    return inv;
  }
  if (inv.slots.empty()) {
    inv.cpu_fallback = true;
    if (inv.fallback_reason.empty()) {
      if (!nvml) {
        inv.fallback_reason = "NVML " + std::string(to_string(inv.nvml_status)) + ": " + inv.nvml_detail;
      } else if (inv.gpus.empty()) {
        inv.fallback_reason = inv.visibility.empty() ? "NVML found no GPU" : inv.visibility;
      } else {
        inv.fallback_reason = "no usable GPU slot (MIG GPUs without instances must be partitioned: ragmig mig plan)";
      }
    }
    const int n = options.cpu_slots > 0 ? options.cpu_slots : default_cpu_slots();
    inv.slots = cpu_slots(n, system_memory_mib());
  }
  return inv;
}

nlohmann::json to_json(const Slot& s) {
  return {{"id", s.id},
          {"kind", to_string(s.kind)},
          {"profile", s.profile},
          {"memory_mib", s.memory_mib},
          {"cuda_visible_devices", s.cuda_visible_devices},
          {"gpu_index", s.gpu_index},
          {"busy", s.busy}};
}

namespace {
nlohmann::json optional_int(const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json to_json(const GpuDeviceState& g) {
  nlohmann::json instances = nlohmann::json::array();
  for (const auto& gi : g.instances) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : gi.devices) {
      devices.push_back({{"ci", d.ci_id},
                         {"uuid", d.uuid},
                         {"memory_total_mib", d.memory_total_mib},
                         {"memory_used_mib", d.memory_used_mib},
                         {"utilisation_gpu", optional_int(d.utilisation_gpu)},
                         {"busy", d.busy ? nlohmann::json(*d.busy) : nlohmann::json(nullptr)}});
    }
    instances.push_back({{"gi", gi.gi_id},
                         {"profile", gi.profile},
                         {"profile_id", gi.profile_id},
                         {"placement", {{"start", gi.placement_start}, {"size", gi.placement_size}}},
                         {"memory_mib", gi.memory_mib},
                         {"devices", devices}});
  }
  return {{"index", g.index},
          {"name", g.name},
          {"uuid", g.uuid},
          {"catalog", g.catalog ? nlohmann::json(g.catalog->name) : nlohmann::json(nullptr)},
          {"memory_total_mib", g.memory_total_mib},
          {"memory_used_mib", g.memory_used_mib},
          {"utilisation_gpu", optional_int(g.utilisation_gpu)},
          {"utilisation_memory", optional_int(g.utilisation_memory)},
          {"mig_capable", g.mig_capable},
          {"mig_enabled", g.mig_enabled},
          {"mig_pending_reset", g.mig_pending},
          {"layout_fixed", g.layout_fixed},
          {"busy", g.busy ? nlohmann::json(*g.busy) : nlohmann::json(nullptr)},
          {"instances", instances},
          {"notes", g.notes}};
}

nlohmann::json to_json(const Inventory& inv) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : inv.gpus) gpus.push_back(to_json(g));
  nlohmann::json slots = nlohmann::json::array();
  for (const auto& s : inv.slots) slots.push_back(to_json(s));
  return {{"nvml",
           {{"available", inv.nvml_status == NvmlStatus::Available},
            {"status", to_string(inv.nvml_status)},
            {"detail", inv.nvml_detail},
            {"library", inv.nvml_library},
            {"driver_version", inv.driver_version}}},
          {"gpus", gpus},
          {"visibility", inv.visibility},
          {"cpu_fallback", inv.cpu_fallback},
          {"fallback_reason", inv.fallback_reason},
          {"slots", slots}};
}

}  // namespace ragmig::gpu
