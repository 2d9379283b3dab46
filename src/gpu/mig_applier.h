// `ragmig mig apply`: carries out a plan file. The dry run (the default) prints each step as the
// equivalent `nvidia-smi mig` command and touches nothing; executing creates and destroys GPU and compute
// instances through NVML, largest first, retrying NVML_ERROR_IN_USE, after checking that every GPU still
// is what the plan was made for. A GPU whose MIG mode is off is never changed without enable_mig.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "gpu/nvml_library.h"
#include "gpu/planner.h"

namespace ragmig::gpu {

struct ApplyOptions {
  bool execute = false;     ///< false: dry run
  bool enable_mig = false;  ///< may turn MIG mode on where it is off
  int in_use_retries = 8;   ///< extra tries after NVML_ERROR_IN_USE
  std::chrono::milliseconds retry_delay{200};  ///< before the first retry; doubles after each
};

using ApplyLog = std::function<void(const std::string&)>;

/// Why the plan cannot be applied with these options whatever the devices say (a plan step that turns MIG
/// on without enable_mig). Empty when there is no such reason.
std::vector<std::string> plan_refusals(const PartitionPlan& plan, const ApplyOptions& options);

/// The dry run: per GPU a header line, then the nvidia-smi commands of each step.
std::vector<std::string> dry_run_lines(const PartitionPlan& plan, const ApplyOptions& options);

/// Calls `call` again while it returns NVML_ERROR_IN_USE, at most `retries` more times, waiting `delay`
/// (doubling) in between. Returns the last result.
nvml::Return retry_in_use(const std::function<nvml::Return()>& call, int retries, std::chrono::milliseconds delay);

/// Executes the plan. Checks all GPUs first (model, UUID, MIG mode, current layout equal to the plan's,
/// no busy instance destroyed) and changes nothing if one check fails; then runs the steps, then reads the
/// layouts back and compares them with the targets. Throws ConfigError (refused options) or DeviceError.
void apply_plan(const NvmlLibrary& nvml, const PartitionPlan& plan, const ApplyOptions& options, const ApplyLog& log);

/// NVML_COMPUTE_INSTANCE_PROFILE_* index of the compute instance that spans a GPU instance of
/// `compute_slices` slices.
unsigned full_compute_instance_profile(int compute_slices);

}  // namespace ragmig::gpu
