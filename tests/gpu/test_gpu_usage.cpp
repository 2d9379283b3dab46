// What `ragmig run` measures of jobs on GPUs: the device utilisation NVML reports (the emulated driver's
// numbers), not the worker's CPU time, and "unknown" where the driver does not say (most do not for MIG
// devices), so that `ragmig status` and the sweep report never pass CPU time off as GPU utilisation.
#include <gmock/gmock.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <thread>

#include "gpu/emulated_gpu_fixture.h"

namespace ragmig::testing {
namespace {

using GpuUsage = EmulatedGpuScheduler;

// The slots of `status --json` by id.
std::map<std::string, json> slots_by_id(const json& status) {
  std::map<std::string, json> out;
  for (const auto& s : status["slots"]) out[s["id"].get<std::string>()] = s;
  return out;
}

TEST_F(GpuUsage, AWholeGpuReportsItsUtilisation) {
  json state = seven_small_instances();
  state["gpus"][0]["mig_current"] = 0;
  state["gpus"][0]["instances"] = json::array();
  state["gpus"][0]["utilisation_gpu"] = 37;
  write_gpus(state);
  const int64_t id = submit({"--slots", "gpu:1", "--cmd", "sleep 120"});
  auto scheduler = start_scheduler({"--tick", "0.2"}, "whole");
  const bool measured = wait_for(
      [&](const json& s) {
        const auto slots = slots_by_id(s);
        return state_of(s, id) == "running" && slots.count("gpu:0") && slots.at("gpu:0")["utilization"].is_number();
      },
      60);
  ASSERT_TRUE(measured) << status().dump(2);
  EXPECT_DOUBLE_EQ(slots_by_id(status()).at("gpu:0")["utilization"].get<double>(), 0.37);
  scheduler->signal(SIGTERM);
  EXPECT_EQ(scheduler->wait(), 0);
}

TEST_F(GpuUsage, MigDevicesReportWhatTheDriverSaysAndNothingElse) {
  json state = seven_small_instances();
  // The driver reports utilisation for the first four MIG devices only.
  for (int k = 0; k < 4; ++k) state["gpus"][0]["instances"][k]["cis"][0]["utilisation_gpu"] = 55;
  write_gpus(state);
  std::vector<int64_t> ids;
  for (int k = 0; k < 7; ++k) ids.push_back(submit({"--slots", "1g.18gb:1", "--cmd", "sleep 120"}));
  auto scheduler = start_scheduler({"--tick", "0.2"}, "mig");
  // Every job running, and the four that can be measured measured.
  const bool measured = wait_for(
      [&](const json& s) {
        for (const int64_t id : ids)
          if (state_of(s, id) != "running") return false;
        const auto slots = slots_by_id(s);
        for (int start = 0; start < 4; ++start) {
          // A status read while the scheduler lists its slots may not hold them all yet: wait, not throw.
          const auto slot = slots.find("mig:0:1g.18gb@" + std::to_string(start));
          if (slot == slots.end() || !slot->second["utilization"].is_number()) return false;
        }
        return true;
      },
      60);
  ASSERT_TRUE(measured) << status().dump(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // past another sample
  const auto slots = slots_by_id(status());
  for (int start = 0; start < 7; ++start) {
    const json& u = slots.at("mig:0:1g.18gb@" + std::to_string(start))["utilization"];
    if (start < 4) {
      ASSERT_TRUE(u.is_number()) << start;
      EXPECT_DOUBLE_EQ(u.get<double>(), 0.55) << start;
    } else {
      EXPECT_TRUE(u.is_null()) << start << ": " << u.dump();  // unknown, not the worker's CPU time
    }
  }
  scheduler->signal(SIGTERM);
  EXPECT_EQ(scheduler->wait(), 0);
}

}  // namespace
}  // namespace ragmig::testing
