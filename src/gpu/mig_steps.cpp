// Step sequencing and replay. The applier creates with explicit placements, so the order does not decide
// where instances land; it still goes largest first so that the printed commands also work when pasted
// without their ":start" (see driver_placement).
#include "gpu/mig_steps.h"

#include <algorithm>

#include "core/error.h"

namespace ragmig::gpu {

const char* to_string(StepKind kind) {
  switch (kind) {
    case StepKind::EnableMig: return "enable_mig";
    case StepKind::DestroyGpuInstance: return "destroy";
    case StepKind::CreateGpuInstance: return "create";
  }
  return "?";
}

bool parse_step_kind(const std::string& text, StepKind* kind) {
  for (StepKind k : {StepKind::EnableMig, StepKind::DestroyGpuInstance, StepKind::CreateGpuInstance}) {
    if (text == to_string(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

bool creates_before(const GpuCatalog& gpu, const Placement& a, const Placement& b) {
  const MigProfile& pa = gpu.profiles[static_cast<size_t>(a.profile)];
  const MigProfile& pb = gpu.profiles[static_cast<size_t>(b.profile)];
  if (pa.compute_slices != pb.compute_slices) return pa.compute_slices > pb.compute_slices;
  if (pa.memory_slices != pb.memory_slices) return pa.memory_slices > pb.memory_slices;
  return a < b;
}

std::vector<MigStep> sequence_steps(const GpuCatalog& gpu, const std::vector<CurrentInstance>& current,
                                    const Layout& target, bool enable_mig) {
  if (std::string why = layout_error(gpu, target); !why.empty()) {
    throw ConfigError("target layout is not valid on " + gpu.name + ": " + why);
  }
  const auto in_target = [&](const Placement& p) { return std::find(target.begin(), target.end(), p) != target.end(); };
  std::vector<MigStep> steps;
  if (enable_mig) steps.push_back({StepKind::EnableMig, {}, -1});
  for (const auto& inst : current) {
    if (in_target(inst.placement)) continue;
    if (inst.busy) {
      throw ConfigError("the target layout drops the busy instance " + to_string(gpu, inst.placement));
    }
    steps.push_back({StepKind::DestroyGpuInstance, inst.placement, inst.gi_id});
  }
  std::vector<Placement> creates;
  for (const auto& p : target) {
    const bool exists = std::any_of(current.begin(), current.end(), [&](const CurrentInstance& c) { return c.placement == p; });
    if (!exists) creates.push_back(p);
  }
  std::sort(creates.begin(), creates.end(), [&](const Placement& a, const Placement& b) { return creates_before(gpu, a, b); });
  for (const auto& p : creates) steps.push_back({StepKind::CreateGpuInstance, p, -1});
  return steps;
}

StepOutcome simulate_steps(const GpuCatalog& gpu, const std::vector<CurrentInstance>& current,
                           const std::vector<MigStep>& steps) {
  StepOutcome out;
  std::vector<CurrentInstance> state = current;
  for (const auto& c : current) out.layout.push_back(c.placement);
  if (std::string why = layout_error(gpu, out.layout); !why.empty()) {
    out.error = "the current layout is not valid: " + why;
    return out;
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const MigStep& step = steps[i];
    const auto fail = [&](const std::string& why) {
      out.error = why;
      out.failed_step = static_cast<int>(i);
      return out;
    };
    if (step.kind == StepKind::EnableMig) {
      if (i != 0) return fail("enable_mig must be the first step");
      continue;
    }
    if (step.placement.profile < 0 || step.placement.profile >= static_cast<int>(gpu.profiles.size())) {
      return fail("unknown profile");
    }
    const std::string where = to_string(gpu, step.placement);
    auto it = std::find_if(state.begin(), state.end(), [&](const CurrentInstance& c) { return c.placement == step.placement; });
    if (step.kind == StepKind::DestroyGpuInstance) {
      if (it == state.end()) return fail("destroy " + where + ": no such instance");
      if (it->busy) return fail("destroy " + where + ": the instance is busy");
      state.erase(it);
    } else {
      if (it != state.end()) return fail("create " + where + ": the instance exists already");
      Layout now;
      for (const auto& c : state) now.push_back(c.placement);
      if (!can_add(gpu, now, step.placement)) {
        now.push_back(step.placement);
        return fail("create " + where + ": " + layout_error(gpu, now));
      }
      state.push_back({step.placement, false, -1});
    }
  }
  out.layout.clear();
  for (const auto& c : state) out.layout.push_back(c.placement);
  out.layout = canonical(std::move(out.layout));
  return out;
}

std::vector<std::string> nvidia_smi_commands(const GpuCatalog& gpu, int gpu_index, const MigStep& step) {
  const std::string dev = "nvidia-smi mig -i " + std::to_string(gpu_index);
  switch (step.kind) {
    case StepKind::EnableMig:
      return {"nvidia-smi -i " + std::to_string(gpu_index) + " -mig 1"};
    case StepKind::DestroyGpuInstance: {
      // Without a known id the command cannot be written exactly; say which instance it must name.
      const std::string gi = step.gi_id >= 0 ? std::to_string(step.gi_id)
                                             : "<id of " + to_string(gpu, step.placement) + ">";
      return {dev + " -gi " + gi + " -dci", dev + " -gi " + gi + " -dgi"};
    }
    case StepKind::CreateGpuInstance: {
      const MigProfile& p = gpu.profiles[static_cast<size_t>(step.placement.profile)];
      // -C adds the default compute instance, which spans the whole GPU instance.
      return {dev + " -cgi " + std::to_string(p.id) + ":" + std::to_string(step.placement.start) + " -C"};
    }
  }
  return {};
}

std::optional<Placement> driver_placement(const GpuCatalog& gpu, const Layout& layout, int profile) {
  const MigProfile& p = gpu.profiles[static_cast<size_t>(profile)];
  std::vector<int> starts = p.starts;
  std::sort(starts.rbegin(), starts.rend());
  for (int s : starts) {
    if (can_add(gpu, layout, {profile, s})) return Placement{profile, s};
  }
  return std::nullopt;
}

std::optional<Layout> create_without_placements(const GpuCatalog& gpu, const std::vector<int>& profiles) {
  Layout layout;
  for (int profile : profiles) {
    auto p = driver_placement(gpu, layout, profile);
    if (!p) return std::nullopt;
    layout.push_back(*p);
  }
  return canonical(std::move(layout));
}

}  // namespace ragmig::gpu
