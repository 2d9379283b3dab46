// The scheduler's commands (`ragmig submit | run | status`) on GPUs of the emulated NVML driver
// (nvml_emulator.cpp): a state folder, the driver's JSON file, and lookups of what ran where.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "core/atomic_file.h"
#include "sched/sched_fixture.h"

namespace ragmig::testing {

using json = nlohmann::json;

// An H200 with MIG on and seven idle 1g.18gb instances (GPU instance ids 1..7 at memory slices 0..6).
inline json seven_small_instances() {
  json instances = json::array();
  for (int k = 0; k < 7; ++k) {
    instances.push_back({{"gi", k + 1},
                         {"profile_id", 19},
                         {"start", k},
                         {"size", 1},
                         {"cis", json::array({{{"ci", 0},
                                               {"profile_id", 0},
                                               {"uuid", "MIG-1g000000-0000-0000-0000-00000000000" + std::to_string(k)},
                                               {"processes", 0}}})}});
  }
  return {{"gpus", json::array({{{"name", "NVIDIA H200"},
                                 {"uuid", "GPU-5e1d7c52-0000-4000-8000-000000000000"},
                                 {"memory_mib", 143771},
                                 {"mig_current", 1},
                                 {"instances", instances}}})}};
}

class EmulatedGpuScheduler : public SchedFixture {
 protected:
  void SetUp() override {
    ::setenv("RAGMIG_NVML_LIBRARY", NVML_EMULATOR, 1);
    ::setenv("NVML_EMULATOR_STATE", nvml_state().c_str(), 1);
    ::unsetenv("CUDA_VISIBLE_DEVICES");  // it would hide the emulator's GPU
  }
  void TearDown() override {
    ::unsetenv("RAGMIG_NVML_LIBRARY");
    ::unsetenv("NVML_EMULATOR_STATE");
  }
  std::string nvml_state() const { return (dir_ / "nvml.json").string(); }
  void write_gpus(const json& state) { write_file_atomic(nvml_state(), state.dump(2)); }
  json gpus() const { return json::parse(read_file(nvml_state())); }

  // The GPU instance (id and profile id) whose compute instance has this MIG UUID, or {-1, -1}.
  std::pair<int, int> instance_of(const std::string& uuid) const {
    const json state = gpus();
    for (const auto& gi : state["gpus"][0]["instances"])
      for (const auto& ci : gi["cis"])
        if (ci["uuid"] == uuid) return {gi["gi"].get<int>(), gi["profile_id"].get<int>()};
    return {-1, -1};
  }

  std::string device_of(int64_t id) {
    const std::string run_dir = job(id)["run_dir"];
    std::string text = read_file(std::filesystem::path(run_dir) / "dev.txt");
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
};

}  // namespace ragmig::testing
