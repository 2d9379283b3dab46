// The scheduler's /metrics on the GPUs of the emulated NVML driver (tests/gpu/nvml_emulator.cpp): MIG slots
// carry the labels that join with DCGM exporter (gpu, UUID, GPU_I_ID, GPU_I_PROFILE) and NVML's memory, and
// memory_high fires on the instance that fills up and clears when it empties.
#include <gtest/gtest.h>

#include "gpu/emulated_gpu_fixture.h"

namespace ragmig::testing {
namespace {

using nlohmann::json;

class MonitorGpu : public EmulatedGpuScheduler {
 protected:
  json scrape(const std::string& url) {
    const auto r = run_process({RAGMIG_PYTHON_PATH, RAGMIG_SOURCE_DIR "/tests/monitor/scrape.py", url});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return json::parse(r.output);
  }
};

TEST_F(MonitorGpu, MigSlotsCarryDcgmLabelsAndMemoryHighFiresAndClears) {
  if (run_process({RAGMIG_PYTHON_PATH, "-c", "import prometheus_client"}).exit_code != 0) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << RAGMIG_PYTHON_PATH << " lacks prometheus-client";
    GTEST_SKIP() << RAGMIG_PYTHON_PATH << " lacks prometheus-client";
  }
  json gpus = seven_small_instances();
  gpus["gpus"][0]["instances"][2]["cis"][0]["memory_used_mib"] = 16000;  // GPU instance 3: of its 16,384 MiB
  write_gpus(gpus);
  write_file_atomic(dir_ / "alerts.toml", "[alerts]\ninterval_s = 0.2\nmemory_for_s = 0.5\n");
  auto scheduler = start_scheduler({"--tick", "0.2", "--alerts", (dir_ / "alerts.toml").string(), "--metrics-port", "0"},
                                   "gpu");
  for (int i = 0; i < 200 && !std::filesystem::exists(std::filesystem::path(state()) / "state.db"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // no job was submitted: the scheduler makes it
  json seen;
  ASSERT_TRUE(wait_for(
      [&](const json& s) {
        seen = s;
        return !s["alerts"].empty();
      },
      30))
      << read_file(dir_ / "scheduler-gpu.log");
  ASSERT_EQ(seen["alerts"].size(), 1u) << seen.dump(1);
  const json alert = seen["alerts"][0];
  EXPECT_EQ(alert["rule"], "memory_high");
  EXPECT_NEAR(alert["value"].get<double>(), 16000.0 / 16384.0, 1e-9);

  const json m = scrape(seen["scheduler"]["metrics_url"]);
  ASSERT_TRUE(m.contains("ragmig_slot_memory_total_bytes")) << m.dump(1);
  ASSERT_EQ(m["ragmig_slot_memory_total_bytes"].size(), 7u);
  for (const auto& s : m["ragmig_slot_memory_total_bytes"]) {
    const json& l = s["labels"];
    EXPECT_EQ(l["kind"], "mig");
    EXPECT_EQ(l["gpu"], "0");
    EXPECT_EQ(l["UUID"], "GPU-5e1d7c52-0000-4000-8000-000000000000");
    EXPECT_EQ(l["GPU_I_PROFILE"], "1g.18gb");
    EXPECT_EQ(s["value"].get<double>(), 16384.0 * 1048576);
    // The instance at memory slice k is GPU instance k + 1 (seven_small_instances); the alert is on id 3's.
    const std::string gi = l["GPU_I_ID"];
    ASSERT_FALSE(gi.empty());
    double used = -1;
    for (const auto& u : m["ragmig_slot_memory_used_bytes"])
      if (u["labels"]["slot"] == l["slot"]) used = u["value"];
    EXPECT_EQ(used, gi == "3" ? 16000.0 * 1048576 : 0.0) << l;
    if (gi == "3") {
      EXPECT_EQ(alert["slot"], l["slot"]);
    }
  }

  // Each slot's info series names the MIG device its workers get.
  ASSERT_TRUE(m.contains("ragmig_slot_info"));
  for (const auto& s : m["ragmig_slot_info"]) {
    const std::string device = s["labels"]["cuda_visible_devices"];
    EXPECT_EQ(device.rfind("MIG-1g000000-0000-0000-0000-00000000000", 0), 0u) << s;
  }

  gpus["gpus"][0]["instances"][2]["cis"][0]["memory_used_mib"] = 100;
  write_gpus(gpus);
  EXPECT_TRUE(wait_for([](const json& s) { return s["alerts"].empty(); }, 30)) << read_file(dir_ / "scheduler-gpu.log");
  scheduler->signal(SIGTERM);
  EXPECT_TRUE(scheduler->wait_exit(30));
}

}  // namespace
}  // namespace ragmig::testing
