// Plan files: JSON round trip, and every malformed key refused with a DataError that names it.
#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "gpu/plan_file.h"
#include "support/test_support.h"

namespace ragmig::gpu {
namespace {

PartitionPlan sample_plan() {
  const GpuCatalog& h200 = gpu_catalog("H200");
  GpuState g;
  g.index = 1;
  g.catalog = &h200;
  g.device_name = "NVIDIA H200";
  g.uuid = "GPU-0000";
  g.instances = {{parse_placement(h200, "4g.71gb@0"), true, 1}, {parse_placement(h200, "3g.71gb@4"), false, 2}};
  return plan_partitions({g}, parse_demands("1g.18gb:4,2g.35gb:1@2"));
}

TEST(PlanFile, RoundTrips) {
  const PartitionPlan plan = sample_plan();
  const nlohmann::json j = plan_to_json(plan);
  EXPECT_EQ(j["format"], kPlanFormat);
  EXPECT_EQ(j["version"], kPlanVersion);
  const PartitionPlan back = plan_from_json(j, "plan.json");
  EXPECT_EQ(plan_to_json(back), j);
  ASSERT_EQ(back.gpus.size(), 1u);
  EXPECT_EQ(back.gpus[0].steps, plan.gpus[0].steps);
  EXPECT_EQ(back.gpus[0].current, plan.gpus[0].current);
  EXPECT_EQ(back.gpus[0].assignments, plan.gpus[0].assignments);

  testing::ScratchDir dir;
  write_plan_file(dir / "plan.json", plan);
  EXPECT_EQ(plan_to_json(read_plan_file(dir / "plan.json")), j);
}

struct BadPlan {
  std::string name;
  std::function<void(nlohmann::json&)> edit;
  std::string expected;  // part of the message: the key and what was wrong
  friend std::ostream& operator<<(std::ostream& os, const BadPlan& c) { return os << c.name; }
};

class BadPlanTest : public ::testing::TestWithParam<BadPlan> {};

TEST_P(BadPlanTest, DataErrorNamesTheKey) {
  nlohmann::json j = plan_to_json(sample_plan());
  GetParam().edit(j);
  try {
    plan_from_json(j, "plan.json");
    FAIL() << "accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().expected), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("plan.json: ", 0), 0u) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadPlanTest,
    ::testing::Values(
        BadPlan{"no_format", [](auto& j) { j.erase("format"); }, "format: missing"},
        BadPlan{"other_format", [](auto& j) { j["format"] = "something"; }, "format: expected"},
        BadPlan{"future_version", [](auto& j) { j["version"] = 2; }, "version: this ragmig reads version 1"},
        BadPlan{"bad_demand", [](auto& j) { j["demand"] = "1g.18gb:x"; }, "demand: demand term"},
        BadPlan{"gpus_not_array", [](auto& j) { j["gpus"] = 3; }, "gpus: expected an array"},
        BadPlan{"index_string", [](auto& j) { j["gpus"][0]["index"] = "1"; }, "gpus[0].index: expected an integer"},
        BadPlan{"unknown_model", [](auto& j) { j["gpus"][0]["gpu"] = "V100"; }, "gpus[0].gpu: unknown GPU model"},
        BadPlan{"mig_enabled_missing", [](auto& j) { j["gpus"][0].erase("mig_enabled"); }, "gpus[0].mig_enabled: missing"},
        BadPlan{"current_bad_placement", [](auto& j) { j["gpus"][0]["current"][1]["instance"] = "3g.71gb@3"; },
                "gpus[0].current[1].instance"},
        BadPlan{"busy_not_bool", [](auto& j) { j["gpus"][0]["current"][0]["busy"] = 1; }, "gpus[0].current[0].busy: expected true or false"},
        BadPlan{"target_invalid", [](auto& j) { j["gpus"][0]["target"] = "7g.141gb@0+1g.18gb@0"; }, "gpus[0].target"},
        BadPlan{"step_op", [](auto& j) { j["gpus"][0]["steps"][0]["op"] = "explode"; }, "gpus[0].steps[0].op: expected enable_mig"},
        BadPlan{"step_instance_missing", [](auto& j) { j["gpus"][0]["steps"][1].erase("instance"); }, "gpus[0].steps[1].instance: missing"},
        BadPlan{"step_destroys_busy", [](auto& j) { j["gpus"][0]["steps"][0] = {{"op", "destroy"}, {"instance", "4g.71gb@0"}}; },
                "gpus[0].steps[0]: destroy 4g.71gb@0: the instance is busy"},
        BadPlan{"steps_miss_target", [](auto& j) { j["gpus"][0]["steps"].erase(j["gpus"][0]["steps"].size() - 1); },
                "gpus[0].steps: the steps lead to"},
        BadPlan{"assignment_demand_out_of_range", [](auto& j) { j["gpus"][0]["assignments"][0]["demand"] = 7; },
                "gpus[0].assignments[0].demand"},
        BadPlan{"assignment_off_target", [](auto& j) { j["gpus"][0]["assignments"][0]["instance"] = "1g.18gb@0"; },
                "gpus[0].assignments[0].instance: names an instance that is not in the target"},
        BadPlan{"mig_off_without_enable_step", [](auto& j) { j["gpus"][0]["mig_enabled"] = false; },
                "gpus[0].steps: the GPU's MIG mode is off"},
        BadPlan{"unplaced_count", [](auto& j) { j["unplaced"] = {{{"demand", 0}, {"count", "one"}}}; }, "unplaced[0].count"}),
    [](const auto& info) { return info.param.name; });

TEST(PlanFile, InvalidJsonAndMissingFile) {
  testing::ScratchDir dir;
  write_file_atomic(dir / "broken.json", "{\"format\": ");
  EXPECT_THROW(read_plan_file(dir / "broken.json"), DataError);
  EXPECT_THROW(read_plan_file(dir / "absent.json"), IoError);
}

// Found by fuzz/fuzz_plan_file: a number too large for a double is nlohmann's out_of_range, not a
// parse_error, and escaped read_plan_file as a library exception.
TEST(PlanFile, NumberOutOfRangeIsADataErrorNamingTheFile) {
  testing::ScratchDir dir;
  write_file_atomic(dir / "huge.json", "{\"format\": \"ragmig-mig-plan\", \"complete\": 1e400}\n");
  try {
    read_plan_file(dir / "huge.json");
    FAIL() << "accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("huge.json: not valid JSON"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ragmig::gpu
