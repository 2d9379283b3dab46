// The destroy/create sequence that turns a GPU's current MIG layout into a target layout: destroys first,
// then creates largest first, never touching busy instances. Also the equivalent `nvidia-smi mig` commands,
// a check that a step list really leads where it claims, and a model of where the driver puts an instance
// when no placement is given (which is why creation must go largest first).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/layout.h"

namespace ragmig::gpu {

/// A GPU instance that exists now. `gi_id` is the driver's GPU instance id where known (-1 in plans made
/// for a GPU described on the command line; the applier then finds the instance by its placement).
struct CurrentInstance {
  Placement placement;
  bool busy = false;
  int gi_id = -1;
  bool operator==(const CurrentInstance&) const = default;
};

enum class StepKind {
  EnableMig,           ///< turn MIG mode on (only with --enable-mig; needs a GPU reset on some systems)
  DestroyGpuInstance,  ///< destroy the compute instances of a GPU instance, then the GPU instance
  CreateGpuInstance,   ///< create a GPU instance at a placement and one compute instance spanning it
};
const char* to_string(StepKind kind);
/// Parses "enable_mig", "destroy", "create"; returns false when `text` is none of them.
bool parse_step_kind(const std::string& text, StepKind* kind);

struct MigStep {
  StepKind kind = StepKind::CreateGpuInstance;
  Placement placement;  ///< unused for EnableMig
  int gi_id = -1;       ///< for DestroyGpuInstance, where known
  bool operator==(const MigStep&) const = default;
};

/// The shortest sequence from `current` to `target`: one destroy per current instance that the target
/// lacks, one create per target instance that does not exist yet. Creates go largest first (compute, then
/// memory slices), then by start. `enable_mig` puts EnableMig first. Throws ConfigError if the target
/// drops a busy instance or is not a valid layout.
std::vector<MigStep> sequence_steps(const GpuCatalog& gpu, const std::vector<CurrentInstance>& current,
                                    const Layout& target, bool enable_mig = false);

/// Where following `steps` from `current` ends, or why it cannot be followed.
struct StepOutcome {
  Layout layout;
  std::string error;       ///< "" when every step was possible
  int failed_step = -1;    ///< index of the first impossible step
};
/// Replays `steps`: a destroy must name an existing, idle instance; a create must keep the layout valid.
StepOutcome simulate_steps(const GpuCatalog& gpu, const std::vector<CurrentInstance>& current,
                           const std::vector<MigStep>& steps);

/// The `nvidia-smi mig` commands that do `step` on GPU `gpu_index` (two for a destroy: compute instances,
/// then the GPU instance).
std::vector<std::string> nvidia_smi_commands(const GpuCatalog& gpu, int gpu_index, const MigStep& step);

/// Where the driver places a new instance of `profile` when asked without a placement
/// (`nvidia-smi mig -cgi ID`): modelled as the highest allowed start that is free. That is the rule under
/// which `-cgi 9,19,14,19` succeeds and `-cgi 19,19,14,9` fails on an A100-40GB. Null when it does not fit.
std::optional<Placement> driver_placement(const GpuCatalog& gpu, const Layout& layout, int profile);

/// Creates `profiles` in the given order with driver_placement; the layout reached, or null when one of
/// them found no room.
std::optional<Layout> create_without_placements(const GpuCatalog& gpu, const std::vector<int>& profiles);

/// The order in which creates run: larger profiles first.
bool creates_before(const GpuCatalog& gpu, const Placement& a, const Placement& b);

}  // namespace ragmig::gpu
