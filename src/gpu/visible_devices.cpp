// CUDA_VISIBLE_DEVICES read as CUDA reads it, with every entry required to name a device (see visible_devices.h).
#include "gpu/visible_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/strings.h"

namespace ragmig::gpu {
namespace {

std::vector<std::string> entries_of(const std::string& value) {
  std::vector<std::string> out = split(value, ',');
  for (auto& e : out) e = std::string(trim(e));
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

[[noreturn]] void refuse(const std::string& value, const std::string& entry, const std::string& why) {
  throw ConfigError(fmt::format("CUDA_VISIBLE_DEVICES=\"{}\": entry \"{}\" {} (expected GPU indices as NVML "
                                "numbers them, GPU-… or MIG-… UUIDs, comma-separated; `ragmig gpus` lists them)",
                                value, entry, why));
}

}  // namespace

Visibility visible_devices(std::vector<GpuDeviceState> gpus, const char* value, const char* device_order) {
  Visibility out;
  if (!value) {
    out.gpus = std::move(gpus);
    return out;
  }
  const std::string text(trim(value));
  if (text.empty() || text == "-1" || text == "NoDevFiles") {
    if (!gpus.empty())
      out.note = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides all {} GPU(s)", value, gpus.size());
    return out;
  }
  // CUDA's numbering is NVML's (PCI bus order) under CUDA_DEVICE_ORDER=PCI_BUS_ID, or where every GPU is one model
  // (fastest first then breaks every tie by bus).
  const bool pci_order = device_order && std::string_view(trim(device_order)) == "PCI_BUS_ID";
  const bool one_model = std::all_of(gpus.begin(), gpus.end(), [&](const GpuDeviceState& g) {
    return g.name == gpus.front().name;
  });
  std::vector<char> whole(gpus.size(), 0);
  std::vector<std::vector<std::string>> mig(gpus.size());  // MIG device UUIDs named, per GPU
  for (const std::string& entry : entries_of(text)) {
    if (entry.empty()) refuse(value, entry, "is empty");
    if (all_digits(entry)) {
      if (!pci_order && !one_model)
        refuse(value, entry,
               "is an index on a machine of several GPU models, where CUDA numbers GPUs fastest first and NVML by "
               "PCI bus (set CUDA_DEVICE_ORDER=PCI_BUS_ID, or name the GPU by UUID)");
      const auto it = std::find_if(gpus.begin(), gpus.end(),
                                   [&](const GpuDeviceState& g) { return std::to_string(g.index) == entry; });
      if (it == gpus.end()) refuse(value, entry, fmt::format("is no GPU index of this machine's {}", gpus.size()));
      whole[static_cast<size_t>(it - gpus.begin())] = 1;
    } else if (entry.starts_with("GPU-")) {
      std::vector<size_t> hits;
      for (size_t k = 0; k < gpus.size(); ++k)
        if (gpus[k].uuid.starts_with(entry)) hits.push_back(k);
      if (hits.size() != 1) refuse(value, entry, hits.empty() ? "names no GPU" : "names more than one GPU");
      whole[hits[0]] = 1;
    } else if (entry.starts_with("MIG-")) {
      std::vector<std::pair<size_t, std::string>> hits;  // (GPU, device UUID)
      for (size_t k = 0; k < gpus.size(); ++k)
        for (const auto& gi : gpus[k].instances)
          for (const auto& dev : gi.devices)
            if (!dev.uuid.empty() && dev.uuid.starts_with(entry)) hits.emplace_back(k, dev.uuid);
      if (hits.size() != 1)
        refuse(value, entry, hits.empty() ? "names no MIG device" : "names more than one MIG device");
      mig[hits[0].first].push_back(hits[0].second);
    } else {
      refuse(value, entry, "is neither an index nor a GPU or MIG UUID");
    }
  }
  size_t hidden = 0, partial = 0;
  for (size_t k = 0; k < gpus.size(); ++k) {
    if (whole[k]) {
      out.gpus.push_back(std::move(gpus[k]));
      continue;
    }
    if (mig[k].empty()) {
      ++hidden;
      continue;
    }
    GpuDeviceState g = std::move(gpus[k]);
    std::vector<GpuInstanceState> kept;
    for (auto& gi : g.instances) {
      std::erase_if(gi.devices, [&](const MigDeviceState& d) {
        return std::find(mig[k].begin(), mig[k].end(), d.uuid) == mig[k].end();
      });
      if (!gi.devices.empty()) kept.push_back(std::move(gi));
    }
    g.instances = std::move(kept);
    g.layout_fixed = true;
    ++partial;
    out.gpus.push_back(std::move(g));
  }
  if (hidden > 0 || partial > 0)
    out.note = fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides {} of {} GPU(s){}", value, hidden,
                           hidden + out.gpus.size(),
                           partial > 0 ? fmt::format("; of {} it names only MIG devices: those alone are used, and "
                                                     "the layout stays", partial)
                                       : "");
  return out;
}

Visibility read_visible_devices(const NvmlLibrary& nvml) {
  return visible_devices(read_devices(nvml), std::getenv("CUDA_VISIBLE_DEVICES"), std::getenv("CUDA_DEVICE_ORDER"));
}

}  // namespace ragmig::gpu
