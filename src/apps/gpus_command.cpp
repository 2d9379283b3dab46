// `ragmig gpus [--json] [--cpu-slots N]`: what the machine offers to run jobs on. Lists GPUs (name,
// memory, utilisation, MIG mode, MIG instances) and the slots the scheduler would use; without NVML or a
// GPU, the CPU slots and why. Read-only: it never changes a device.
#include <fmt/format.h>

#include <cstdio>

#include "apps/command.h"
#include "gpu/inventory.h"

namespace ragmig::apps {
namespace {

struct GpusArgs {
  bool json = false;
  int cpu_slots = 0;
};

std::string mib_text(int64_t mib) {
  return mib >= 1024 ? fmt::format("{:.1f} GiB", static_cast<double>(mib) / 1024.0) : fmt::format("{} MiB", mib);
}

std::string percent(const std::optional<int>& v) { return v ? fmt::format("{}%", *v) : "n/a"; }

void print_human(const gpu::Inventory& inv) {
  if (inv.nvml_status == gpu::NvmlStatus::Available) {
    std::printf("NVML: available (%s, driver %s)\n", inv.nvml_library.c_str(),
                inv.driver_version.empty() ? "unknown" : inv.driver_version.c_str());
  } else {
    std::printf("NVML: %s — %s\n", gpu::to_string(inv.nvml_status), inv.nvml_detail.c_str());
  }
  for (const auto& g : inv.gpus) {
    std::printf("GPU %d: %s  %s  memory %s (used %s)  utilisation %s  MIG %s%s  catalog %s\n", g.index, g.name.c_str(),
                g.uuid.c_str(), mib_text(g.memory_total_mib).c_str(), mib_text(g.memory_used_mib).c_str(),
                percent(g.utilisation_gpu).c_str(),
                !g.mig_capable ? "unsupported" : (g.mig_enabled ? "on" : "off"),
                g.mig_pending ? " (change pending reset)" : "", g.catalog ? g.catalog->name.c_str() : "none");
    for (const auto& gi : g.instances) {
      std::printf("  GI %-3d %-11s @%d  %s\n", gi.gi_id, gi.profile.c_str(), gi.placement_start,
                  mib_text(gi.memory_mib).c_str());
      for (const auto& d : gi.devices) {
        std::printf("    CI %d  %s  used %s  %s\n", d.ci_id, d.uuid.c_str(), mib_text(d.memory_used_mib).c_str(),
                    !d.busy ? "busy: unknown" : (*d.busy ? "busy" : "idle"));
      }
    }
    for (const auto& n : g.notes) std::printf("  note: %s\n", n.c_str());
  }
  if (!inv.visibility.empty() && !inv.cpu_fallback) std::printf("%s.\n", inv.visibility.c_str());
  if (inv.cpu_fallback) {
    std::printf("No usable GPU (%s): offering %zu CPU slot(s).\n", inv.fallback_reason.c_str(), inv.slots.size());
  }
  std::printf("%-14s %-4s %-24s %-10s %s\n", "SLOT", "KIND", "PROFILE", "MEMORY", "CUDA_VISIBLE_DEVICES");
  for (const auto& s : inv.slots) {
    std::printf("%-14s %-4s %-24s %-10s %s%s\n", s.id.c_str(), gpu::to_string(s.kind), s.profile.c_str(),
                mib_text(s.memory_mib).c_str(), s.cuda_visible_devices.empty() ? "(empty)" : s.cuda_visible_devices.c_str(),
                s.busy ? "  busy" : "");
  }
}

}  // namespace

Command add_gpus_command(CLI::App& root) {
  auto args = std::make_shared<GpusArgs>();
  CLI::App* sub = root.add_subcommand("gpus", "List GPUs, MIG instances and the slots jobs can run on (changes nothing)");
  sub->add_flag("--json", args->json, "print the inventory as JSON");
  sub->add_option("--cpu-slots", args->cpu_slots,
                  "CPU slots: 0 (default) = one per core where there is no usable GPU, none beside GPUs;"
                  " a number is offered beside GPUs too");
  sub->footer(std::string("Environment: ") + gpu::kNvmlLibraryEnv + " names the NVML library to load (default " +
              gpu::kNvmlDefaultLibrary + ").");
  return Command{sub, [args]() -> int {
                   const gpu::Inventory inv = gpu::read_inventory({.cpu_slots = args->cpu_slots, .nvml_library = ""});
                   if (args->json) {
                     std::printf("%s\n", gpu::to_json(inv).dump(2).c_str());
                   } else {
                     print_human(inv);
                   }
                   return kOk;
                 }};
}

}  // namespace ragmig::apps
