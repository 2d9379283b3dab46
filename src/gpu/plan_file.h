// The plan file that `ragmig mig plan --json` writes and `ragmig mig apply` reads: versioned JSON with, per
// GPU, its index and model, the current instances (busy ones marked), the target layout, the steps and
// the assignments, plus the demands and what stayed unplaced. Reading validates every key and checks that
// the steps lead from the current layout to the target.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "gpu/planner.h"

namespace ragmig::gpu {

inline constexpr const char* kPlanFormat = "ragmig-mig-plan";
inline constexpr int kPlanVersion = 1;

nlohmann::json plan_to_json(const PartitionPlan& plan);

/// Parses a plan; `source` names the file in errors. Throws DataError naming the key and what was
/// expected ("plan.json: gpus[0].steps[2].start: expected an integer").
PartitionPlan plan_from_json(const nlohmann::json& json, const std::string& source);

/// Reads and parses a plan file. Throws IoError (unreadable) or DataError (malformed).
PartitionPlan read_plan_file(const std::filesystem::path& path);
/// Writes a plan file atomically.
void write_plan_file(const std::filesystem::path& path, const PartitionPlan& plan);

}  // namespace ragmig::gpu
