// The NVML side of applying a plan. Everything that decides *what* to do is in the pure step sequencing
// (mig_steps.h); this file only checks the devices, executes steps one by one and verifies the result.
#include "gpu/mig_applier.h"

#include <algorithm>
#include <thread>

#include "core/error.h"
#include "gpu/nvml_device.h"

namespace ragmig::gpu {
namespace {

std::string gpu_label(const GpuPlan& g) { return "GPU " + std::to_string(g.index) + " (" + g.catalog->name + ")"; }

void check_rc(const NvmlLibrary& nvml, nvml::Return rc, const std::string& what) {
  if (rc == nvml::kErrorNoPermission) {
    throw DeviceError(what + ": " + nvml.error_string(rc) + " (changing MIG instances needs root)");
  }
  nvml.check(rc, what);
}

Layout layout_of(const GpuCatalog& gpu, const std::vector<GpuInstanceState>& instances, const std::string& label) {
  Layout layout;
  for (const auto& gi : instances) {
    const int p = gpu.profile_index_by_id(gi.profile_id);
    if (p < 0) throw DeviceError(label + ": GPU instance " + std::to_string(gi.gi_id) + " has profile id " +
                                 std::to_string(gi.profile_id) + ", which the catalog of " + gpu.name + " lacks");
    layout.push_back({p, gi.placement_start});
  }
  return canonical(std::move(layout));
}

Layout planned_current(const GpuPlan& g) {
  Layout layout;
  for (const auto& c : g.current) layout.push_back(c.placement);
  return canonical(std::move(layout));
}

// The NVML handle of the GPU instance at `p`, found by profile and placement (ids may have changed since
// the plan was written).
nvml::GpuInstance find_gpu_instance(const NvmlLibrary& nvml, nvml::Device dev, const GpuCatalog& gpu, const Placement& p,
                                    const std::string& label) {
  const MigProfile& prof = gpu.profiles[static_cast<size_t>(p.profile)];
  nvml::GpuInstanceProfileInfo info{};
  check_rc(nvml, nvml.api().device_get_gpu_instance_profile_info(dev, prof.nvml_index, &info),
           label + ": profile " + prof.name);
  std::vector<nvml::GpuInstance> handles(std::max(1u, info.instanceCount));
  unsigned int count = 0;
  check_rc(nvml, nvml.api().device_get_gpu_instances(dev, info.id, handles.data(), &count),
           label + ": listing " + prof.name + " instances");
  for (unsigned int k = 0; k < count && k < handles.size(); ++k) {
    nvml::GpuInstanceInfo gi{};
    if (nvml.api().gpu_instance_get_info(handles[k], &gi) == nvml::kSuccess && static_cast<int>(gi.placement.start) == p.start) {
      return handles[k];
    }
  }
  throw DeviceError(label + ": no GPU instance " + to_string(gpu, p) + " to destroy");
}

void destroy_instance(const NvmlLibrary& nvml, nvml::Device dev, const GpuPlan& g, const MigStep& step,
                      const ApplyOptions& options) {
  const std::string label = gpu_label(g);
  const std::string where = to_string(*g.catalog, step.placement);
  const nvml::GpuInstance gi = find_gpu_instance(nvml, dev, *g.catalog, step.placement, label);
  for (unsigned idx = 0; idx < nvml::kComputeInstanceProfileCount; ++idx) {
    nvml::ComputeInstanceProfileInfo info{};
    if (nvml.api().gpu_instance_get_compute_instance_profile_info(gi, idx, nvml::kComputeInstanceEngineProfileShared,
                                                                  &info) != nvml::kSuccess) {
      continue;
    }
    std::vector<nvml::ComputeInstance> cis(std::max(1u, info.instanceCount));
    unsigned int count = 0;
    if (nvml.api().gpu_instance_get_compute_instances(gi, info.id, cis.data(), &count) != nvml::kSuccess) continue;
    for (unsigned int k = 0; k < count && k < cis.size(); ++k) {
      const nvml::ComputeInstance ci = cis[k];
      check_rc(nvml,
               retry_in_use([&] { return nvml.api().compute_instance_destroy(ci); }, options.in_use_retries,
                            options.retry_delay),
               label + ": destroying a compute instance of " + where);
    }
  }
  check_rc(nvml,
           retry_in_use([&] { return nvml.api().gpu_instance_destroy(gi); }, options.in_use_retries, options.retry_delay),
           label + ": destroying " + where);
}

void create_instance(const NvmlLibrary& nvml, nvml::Device dev, const GpuPlan& g, const MigStep& step,
                     const ApplyOptions& options) {
  const std::string label = gpu_label(g);
  const MigProfile& prof = g.catalog->profiles[static_cast<size_t>(step.placement.profile)];
  const std::string where = to_string(*g.catalog, step.placement);
  nvml::GpuInstanceProfileInfo info{};
  check_rc(nvml, nvml.api().device_get_gpu_instance_profile_info(dev, prof.nvml_index, &info),
           label + ": profile " + prof.name);
  if (static_cast<int>(info.id) != prof.id || static_cast<int>(info.sliceCount) != prof.compute_slices) {
    throw DeviceError(label + ": the driver's profile " + std::to_string(prof.nvml_index) + " is id " +
                      std::to_string(info.id) + " with " + std::to_string(info.sliceCount) +
                      " slices, the catalog says " + prof.name + " = id " + std::to_string(prof.id));
  }
  // The driver's own placement list catches a catalog that disagrees with this GPU before anything fails
  // half-way; drivers without the call are trusted to refuse a bad placement themselves.
  if (nvml.api().device_get_gpu_instance_possible_placements) {
    // NVML wants room for every placement of the profile: never more than one per memory slice.
    std::vector<nvml::GpuInstancePlacement> possible(std::max<size_t>(info.instanceCount, 8));
    unsigned int count = static_cast<unsigned int>(possible.size());
    if (nvml.api().device_get_gpu_instance_possible_placements(dev, info.id, possible.data(), &count) == nvml::kSuccess) {
      possible.resize(std::min<size_t>(count, possible.size()));
      const bool offered = std::any_of(possible.begin(), possible.end(), [&](const nvml::GpuInstancePlacement& p) {
        return static_cast<int>(p.start) == step.placement.start && static_cast<int>(p.size) == prof.memory_slices;
      });
      if (!offered) {
        throw DeviceError(label + ": the driver does not offer " + where + " (in use, or the catalog differs from this GPU)");
      }
    }
  }
  const nvml::GpuInstancePlacement placement{static_cast<unsigned>(step.placement.start),
                                             static_cast<unsigned>(prof.memory_slices)};
  nvml::GpuInstance gi = nullptr;
  check_rc(nvml,
           retry_in_use([&] { return nvml.api().device_create_gpu_instance_with_placement(dev, info.id, &placement, &gi); },
                        options.in_use_retries, options.retry_delay),
           label + ": creating " + where);
  try {
    nvml::ComputeInstanceProfileInfo ci_info{};
    check_rc(nvml,
             nvml.api().gpu_instance_get_compute_instance_profile_info(
                 gi, full_compute_instance_profile(prof.compute_slices), nvml::kComputeInstanceEngineProfileShared, &ci_info),
             label + ": compute instance profile for " + where);
    nvml::ComputeInstance ci = nullptr;
    check_rc(nvml,
             retry_in_use([&] { return nvml.api().gpu_instance_create_compute_instance(gi, ci_info.id, &ci); },
                          options.in_use_retries, options.retry_delay),
             label + ": creating the compute instance of " + where);
  } catch (...) {
    // A GPU instance without a compute instance is unusable and would confuse the next plan.
    nvml.api().gpu_instance_destroy(gi);
    throw;
  }
}

}  // namespace

unsigned full_compute_instance_profile(int compute_slices) {
  switch (compute_slices) {
    case 1: return nvml::kComputeInstanceProfile1Slice;
    case 2: return nvml::kComputeInstanceProfile2Slice;
    case 3: return nvml::kComputeInstanceProfile3Slice;
    case 4: return nvml::kComputeInstanceProfile4Slice;
    case 6: return nvml::kComputeInstanceProfile6Slice;
    case 7: return nvml::kComputeInstanceProfile7Slice;
    case 8: return nvml::kComputeInstanceProfile8Slice;
  }
  throw DeviceError("no compute instance profile spans " + std::to_string(compute_slices) + " slices");
}

std::vector<std::string> plan_refusals(const PartitionPlan& plan, const ApplyOptions& options) {
  std::vector<std::string> out;
  for (const auto& g : plan.gpus) {
    const bool enables = std::any_of(g.steps.begin(), g.steps.end(), [](const MigStep& s) { return s.kind == StepKind::EnableMig; });
    if ((enables || !g.mig_enabled) && !options.enable_mig && !g.steps.empty()) {
      out.push_back(gpu_label(g) + ": MIG mode is off; ragmig changes nothing on it unless --enable-mig is given");
    }
  }
  return out;
}

std::vector<std::string> dry_run_lines(const PartitionPlan& plan, const ApplyOptions& options) {
  std::vector<std::string> lines;
  for (const auto& g : plan.gpus) {
    const GpuCatalog& gpu = *g.catalog;
    std::string current = to_string(gpu, planned_current(g));
    lines.push_back("# " + gpu_label(g) + ": " + (current.empty() ? "(no instances)" : current) + " -> " +
                    (g.target.empty() ? "(no instances)" : to_string(gpu, g.target)));
    if (g.steps.empty()) {
      lines.push_back("# nothing to change");
      continue;
    }
    if (!g.mig_enabled && !options.enable_mig) {
      lines.push_back("# MIG mode is off: nothing would change without --enable-mig");
      continue;
    }
    std::vector<MigStep> steps = g.steps;
    if (!g.mig_enabled && (steps.empty() || steps.front().kind != StepKind::EnableMig)) {
      steps.insert(steps.begin(), {StepKind::EnableMig, {}, -1});
    }
    for (const auto& s : steps) {
      for (const auto& cmd : nvidia_smi_commands(gpu, g.index, s)) lines.push_back(cmd);
    }
  }
  return lines;
}

nvml::Return retry_in_use(const std::function<nvml::Return()>& call, int retries, std::chrono::milliseconds delay) {
  nvml::Return rc = call();
  for (int attempt = 0; attempt < retries && rc == nvml::kErrorInUse; ++attempt) {
    std::this_thread::sleep_for(delay);
    delay *= 2;
    rc = call();
  }
  return rc;
}

void apply_plan(const NvmlLibrary& nvml, const PartitionPlan& plan, const ApplyOptions& options, const ApplyLog& log) {
  if (auto refusals = plan_refusals(plan, options); !refusals.empty()) throw ConfigError(refusals.front());
  if (!nvml.api().has_mig()) throw DeviceError(nvml.path() + " has no MIG entry points (driver older than R450?)");

  // Every check comes before the first change, so a plan that no longer fits one GPU changes none.
  struct Checked {
    const GpuPlan* plan;
    nvml::Device device;
    bool enable;
  };
  std::vector<Checked> checked;
  for (const auto& g : plan.gpus) {
    const std::string label = gpu_label(g);
    const GpuDeviceState state = read_device(nvml, g.index);
    if (state.catalog != g.catalog) {
      throw DeviceError(label + ": the device is '" + state.name + "' (" +
                        (state.catalog ? state.catalog->name : std::string("not in the catalog")) +
                        "), not the model the plan was made for");
    }
    if (!g.uuid.empty() && g.uuid != state.uuid) {
      throw DeviceError(label + ": its UUID is " + state.uuid + ", the plan was made for " + g.uuid);
    }
    if (!state.mig_capable) throw DeviceError(label + ": the device does not support MIG");
    if (state.mig_pending) {
      throw DeviceError(label + ": a MIG mode change waits for a GPU reset (nvidia-smi -r -i " + std::to_string(g.index) + ")");
    }
    if (!state.mig_enabled && !options.enable_mig) {
      throw DeviceError(label + ": MIG mode is off; ragmig changes nothing on it unless --enable-mig is given");
    }
    const Layout now = state.mig_enabled ? layout_of(*g.catalog, state.instances, label) : Layout{};
    if (now != planned_current(g)) {
      throw DeviceError(label + ": the layout is now '" + to_string(*g.catalog, now) + "', the plan expected '" +
                        to_string(*g.catalog, planned_current(g)) + "'; make a new plan");
    }
    for (const auto& s : g.steps) {
      if (s.kind != StepKind::DestroyGpuInstance) continue;
      for (const auto& gi : state.instances) {
        const bool here = gi.placement_start == s.placement.start &&
                          gi.profile_id == g.catalog->profiles[static_cast<size_t>(s.placement.profile)].id;
        const bool busy = std::any_of(gi.devices.begin(), gi.devices.end(), [](const MigDeviceState& d) { return d.busy.value_or(false); });
        if (here && busy) throw DeviceError(label + ": " + to_string(*g.catalog, s.placement) + " is busy now; make a new plan");
      }
    }
    checked.push_back({&g, device_handle(nvml, g.index), !state.mig_enabled});
  }

  for (const auto& c : checked) {
    const GpuPlan& g = *c.plan;
    const std::string label = gpu_label(g);
    if (c.enable) {
      log(label + ": enabling MIG mode (nvidia-smi -i " + std::to_string(g.index) + " -mig 1)");
      nvml::Return activation = nvml::kSuccess;
      check_rc(nvml, nvml.api().device_set_mig_mode(c.device, nvml::kDeviceMigEnable, &activation), label + ": enabling MIG");
      if (activation != nvml::kSuccess) {
        throw DeviceError(label + ": MIG mode is set but waits for a GPU reset (" + nvml.error_string(activation) +
                          "); reset it (nvidia-smi -r -i " + std::to_string(g.index) + ") and run apply again");
      }
    }
    for (const auto& s : g.steps) {
      if (s.kind == StepKind::EnableMig) continue;
      for (const auto& cmd : nvidia_smi_commands(*g.catalog, g.index, s)) log(label + ": " + cmd);
      if (s.kind == StepKind::DestroyGpuInstance) {
        destroy_instance(nvml, c.device, g, s, options);
      } else {
        create_instance(nvml, c.device, g, s, options);
      }
    }
    const Layout result = layout_of(*g.catalog, read_gpu_instances(nvml, c.device, g.catalog, nullptr), label);
    if (result != g.target) {
      throw DeviceError(label + ": after the steps the layout is '" + to_string(*g.catalog, result) + "', not the target '" +
                        to_string(*g.catalog, g.target) + "'");
    }
    log(label + ": layout is now " + (result.empty() ? "(no instances)" : to_string(*g.catalog, result)));
  }
}

}  // namespace ragmig::gpu
