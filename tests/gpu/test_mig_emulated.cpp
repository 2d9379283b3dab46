// `ragmig gpus` and `ragmig mig plan|apply --execute` against the emulated NVML driver (nvml_emulator.cpp):
// the NVML code paths a CPU machine otherwise never runs. The real binary loads the emulator through
// RAGMIG_NVML_LIBRARY; the GPUs' state is a JSON file the emulator reads and rewrites, so a test sets up a
// GPU, runs commands, and reads back what they did (the "calls" list) and the layout they left.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::testing {
namespace {

using json = nlohmann::json;

// H200 profile ids (nvidia-smi -lgip): 1g.18gb 19, 1g.35gb 15, 2g.35gb 14, 3g.71gb 9, 4g.71gb 5, 7g.141gb 0.
constexpr int k1g = 19, k2g = 14, k3g = 9;

json gpu_instance(int gi, int profile_id, int start, int size, int processes) {
  return {{"gi", gi},
          {"profile_id", profile_id},
          {"start", start},
          {"size", size},
          {"cis", json::array({{{"ci", 0},
                                {"profile_id", size == 8 ? 4 : (profile_id == k3g ? 2 : (profile_id == k2g ? 1 : 0))},
                                {"uuid", "MIG-0000000" + std::to_string(gi) + "-aaaa-bbbb-cccc-000000000000"},
                                {"processes", processes},
                                {"memory_used_mib", processes * 1000}}})}};
}

// One H200 with MIG on: 3g.71gb@0 running a job, 1g.18gb@4 and 1g.18gb@5 idle.
json h200_state() {
  return {
      {"driver_version", "570.86.15"},
      {"gpus", json::array({{{"name", "NVIDIA H200"},
                             {"uuid", "GPU-5e1d7c52-0000-4000-8000-000000000000"},
                             {"memory_mib", 143771},
                             {"memory_used_mib", 1000},
                             {"utilisation_gpu", 37},
                             {"utilisation_memory", 12},
                             {"mig_current", 1},
                             {"instances", json::array({gpu_instance(2, k3g, 0, 4, 1), gpu_instance(7, k1g, 4, 1, 0),
                                                        gpu_instance(8, k1g, 5, 1, 0)})}}})}};
}

class Emulated : public ::testing::Test {
 protected:
  void SetUp() override { ::unsetenv("CUDA_VISIBLE_DEVICES"); }  // it would hide the emulator's GPU
  void write(const json& state) { write_file_atomic(path(), state.dump(2)); }
  json read() const { return json::parse(read_file(path())); }
  std::string path() const { return (dir_ / "nvml.json").string(); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  ProcessResult ragmig(std::vector<std::string> args) const {
    ::setenv("RAGMIG_NVML_LIBRARY", NVML_EMULATOR, 1);
    ::setenv("NVML_EMULATOR_STATE", path().c_str(), 1);
    args.insert(args.begin(), RAGMIG_BINARY);
    ProcessResult r = run_process(args);
    ::unsetenv("RAGMIG_NVML_LIBRARY");
    ::unsetenv("NVML_EMULATOR_STATE");
    return r;
  }

  // The instances of GPU 0 as "profile_id@start" in placement order, e.g. {"9@0", "19@4"}.
  std::vector<std::string> layout() const {
    std::vector<std::string> out;
    const json state = read();
    for (const auto& gi : state["gpus"][0]["instances"]) {
      out.push_back(std::to_string(gi["profile_id"].get<int>()) + "@" + std::to_string(gi["start"].get<int>()));
    }
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
      return std::stoi(a.substr(a.find('@') + 1)) < std::stoi(b.substr(b.find('@') + 1));
    });
    return out;
  }

  std::vector<std::string> calls() const { return read()["calls"].get<std::vector<std::string>>(); }

  ScratchDir dir_;
};

size_t position(const std::vector<std::string>& calls, const std::string& prefix) {
  const auto it =
      std::find_if(calls.begin(), calls.end(), [&](const std::string& c) { return c.rfind(prefix, 0) == 0; });
  return it == calls.end() ? std::string::npos : static_cast<size_t>(it - calls.begin());
}

// CUDA_VISIBLE_DEVICES as a scheduler given part of a machine sees it (gpu/visible_devices.h): the GPUs and MIG
// devices it names are the only slots, a GPU named by a MIG device alone keeps its layout, an empty value hides
// every GPU, and an entry that names nothing is bad input that names it.
TEST_F(Emulated, CudaVisibleDevicesNamesTheGpusAndMigDevicesRagmigMayUse) {
  json state = h200_state();
  state["gpus"].push_back({{"name", "NVIDIA H200"},
                           {"uuid", "GPU-5e1d7c52-1111-4000-8000-000000000000"},
                           {"memory_mib", 143771},
                           {"mig_current", 0},
                           {"instances", json::array()}});
  write(state);
  const auto gpus_seeing = [&](const char* value) {
    ::setenv("CUDA_VISIBLE_DEVICES", value, 1);
    const auto r = ragmig({"gpus", "--json"});
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    return r;
  };
  const auto slot_ids = [](const json& j) {
    std::vector<std::string> ids;
    for (const auto& s : j["slots"]) ids.push_back(s["id"]);
    return ids;
  };
  auto r = gpus_seeing("1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = output_json(r);
  EXPECT_EQ(slot_ids(j), std::vector<std::string>{"gpu:1"});
  EXPECT_NE(j["visibility"].get<std::string>().find("hides 1 of 2 GPU(s)"), std::string::npos) << r.output;

  r = gpus_seeing("MIG-00000007-aaaa-bbbb-cccc-000000000000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = output_json(r);
  ASSERT_EQ(j["slots"].size(), 1u) << r.output;
  EXPECT_EQ(j["slots"][0]["cuda_visible_devices"], "MIG-00000007-aaaa-bbbb-cccc-000000000000");
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_TRUE(j["gpus"][0]["layout_fixed"].get<bool>());

  r = gpus_seeing("");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = output_json(r);
  EXPECT_TRUE(j["cpu_fallback"].get<bool>());
  EXPECT_NE(j["fallback_reason"].get<std::string>().find("hides all 2 GPU(s)"), std::string::npos) << r.output;
  EXPECT_EQ(j["slots"][0]["kind"], "cpu");

  r = gpus_seeing("0,3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("entry \"3\" is no GPU index"), std::string::npos) << r.output;
}

TEST_F(Emulated, GpusListsTheGpuItsInstancesAndSlotsAndChangesNothing) {
  write(h200_state());
  const std::string before = read_file(path());
  const auto r = ragmig({"gpus", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = output_json(r);
  EXPECT_TRUE(j["nvml"]["available"].get<bool>()) << r.output;
  EXPECT_FALSE(j["cpu_fallback"].get<bool>());
  ASSERT_EQ(j["gpus"].size(), 1u);
  const json& g = j["gpus"][0];
  EXPECT_EQ(g["name"], "NVIDIA H200");
  EXPECT_EQ(g["catalog"], "H200-141GB");
  EXPECT_EQ(g["memory_total_mib"], 143771);
  EXPECT_EQ(g["utilisation_gpu"], 37);
  EXPECT_TRUE(g["mig_enabled"].get<bool>());
  EXPECT_FALSE(g["mig_pending_reset"].get<bool>());
  EXPECT_TRUE(g["busy"].get<bool>());
  ASSERT_EQ(g["instances"].size(), 3u);
  EXPECT_EQ(g["instances"][0]["gi"], 2);
  EXPECT_EQ(g["instances"][0]["profile"], "3g.71gb");
  EXPECT_EQ(g["instances"][0]["placement"]["start"], 0);
  EXPECT_EQ(g["instances"][0]["placement"]["size"], 4);
  EXPECT_EQ(g["instances"][0]["devices"][0]["uuid"], "MIG-00000002-aaaa-bbbb-cccc-000000000000");
  EXPECT_EQ(g["instances"][0]["devices"][0]["memory_used_mib"], 1000);
  EXPECT_TRUE(g["instances"][0]["devices"][0]["busy"].get<bool>());
  EXPECT_TRUE(g["instances"][0]["devices"][0]["utilisation_gpu"].is_null());  // the driver does not say per MIG device
  EXPECT_EQ(g["instances"][1]["profile"], "1g.18gb");
  EXPECT_FALSE(g["instances"][1]["devices"][0]["busy"].get<bool>());

  ASSERT_EQ(j["slots"].size(), 3u);
  EXPECT_EQ(j["slots"][0]["id"], "mig:0:3g.71gb@0");
  EXPECT_EQ(j["slots"][0]["kind"], "mig");
  EXPECT_EQ(j["slots"][0]["profile"], "3g.71gb");
  EXPECT_EQ(j["slots"][0]["memory_mib"], 65536);
  EXPECT_EQ(j["slots"][0]["cuda_visible_devices"], "MIG-00000002-aaaa-bbbb-cccc-000000000000");
  EXPECT_TRUE(j["slots"][0]["busy"].get<bool>());
  EXPECT_EQ(j["slots"][2]["id"], "mig:0:1g.18gb@5");
  EXPECT_FALSE(j["slots"][2]["busy"].get<bool>());

  const auto text = ragmig({"gpus"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("driver 570.86.15"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("GPU 0: NVIDIA H200"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("MIG on"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("mig:0:1g.18gb@4"), std::string::npos) << text.output;
  EXPECT_EQ(read_file(path()), before);  // listing never writes
}

// The H200 with MIG off and nothing running: one whole-GPU slot.
json whole_h200_state() {
  json state = h200_state();
  state["gpus"][0]["mig_current"] = 0;
  state["gpus"][0]["instances"] = json::array();
  state["gpus"][0]["processes"] = 0;
  return state;
}

TEST_F(Emulated, AWholeGpuWithMigOffIsOneSlot) {
  write(whole_h200_state());
  const json j = output_json(ragmig({"gpus", "--json"}));
  ASSERT_EQ(j["slots"].size(), 1u);
  EXPECT_EQ(j["slots"][0]["id"], "gpu:0");
  EXPECT_EQ(j["slots"][0]["kind"], "gpu");
  EXPECT_EQ(j["slots"][0]["cuda_visible_devices"], "GPU-5e1d7c52-0000-4000-8000-000000000000");
  EXPECT_FALSE(j["gpus"][0]["mig_enabled"].get<bool>());
  EXPECT_TRUE(j["gpus"][0]["mig_capable"].get<bool>());
}

// CPU slots asked for by number are offered beside the GPUs (jobs that need no GPU run there too); without the
// number a GPU machine offers none (its cores feed the GPU jobs). Seen on the GPU machine: `ragmig run
// --cpu-slots 1` offered only gpu:0 and CPU jobs waited as unrunnable.
TEST_F(Emulated, CpuSlotsGivenByNumberSitBesideTheGpus) {
  write(whole_h200_state());
  const json plain = output_json(ragmig({"gpus", "--json"}));
  ASSERT_EQ(plain["slots"].size(), 1u);
  EXPECT_EQ(plain["slots"][0]["id"], "gpu:0");
  const json both = output_json(ragmig({"gpus", "--json", "--cpu-slots", "2"}));
  ASSERT_EQ(both["slots"].size(), 3u);
  EXPECT_EQ(both["slots"][0]["id"], "gpu:0");
  EXPECT_EQ(both["slots"][1]["id"], "cpu:0");
  EXPECT_EQ(both["slots"][2]["kind"], "cpu");
  EXPECT_FALSE(both["cpu_fallback"].get<bool>());
}

TEST_F(Emulated, PlanForTheMachineThenExecuteIt) {
  write(h200_state());
  // A second 3g.71gb fits only after the two idle 1g.18gb instances at 4 and 5 go; the busy 3g.71gb@0 stays.
  const auto plan = ragmig({"mig", "plan", "--demand", "3g.71gb:1", "-o", file("plan.json")});
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  EXPECT_NE(plan.output.find("busy:    3g.71gb@0"), std::string::npos) << plan.output;
  EXPECT_NE(plan.output.find("target:  3g.71gb@0+3g.71gb@4"), std::string::npos) << plan.output;

  const auto dry = ragmig({"mig", "apply", file("plan.json")});
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_TRUE(read()["calls"].empty()) << dry.output;  // a dry run changes nothing

  const auto r = ragmig({"mig", "apply", file("plan.json"), "--execute"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("layout is now 3g.71gb@0+3g.71gb@4"), std::string::npos) << r.output;
  EXPECT_EQ(layout(), (std::vector<std::string>{"9@0", "9@4"}));
  const json after = read();
  EXPECT_EQ(after["gpus"][0]["instances"][0]["gi"], 2);  // the busy instance is the same one, job and all
  EXPECT_EQ(after["gpus"][0]["instances"][0]["cis"][0]["processes"], 1);
  // Compute instances go before their GPU instance, destroys before creates, and the new GPU instance gets a
  // compute instance spanning its 3 slices (compute profile index 2).
  const auto c = calls();
  EXPECT_EQ(c, (std::vector<std::string>{"destroy_ci gpu=0 gi=7 ci=0", "destroy_gi gpu=0 gi=7",
                                         "destroy_ci gpu=0 gi=8 ci=0", "destroy_gi gpu=0 gi=8",
                                         "create_gi gpu=0 profile=9 start=4", "create_ci gpu=0 gi=1 profile=2"}));

  // The new instance is a slot with its own MIG UUID.
  const json j = output_json(ragmig({"gpus", "--json"}));
  ASSERT_EQ(j["slots"].size(), 2u);
  EXPECT_EQ(j["slots"][1]["profile"], "3g.71gb");
  EXPECT_EQ(j["slots"][1]["cuda_visible_devices"].get<std::string>().rfind("MIG-", 0), 0u);
  EXPECT_NE(j["slots"][1]["cuda_visible_devices"], j["slots"][0]["cuda_visible_devices"]);

  // Applying the same plan again: the layout is no longer the one it was made for.
  const std::string before = read_file(path());
  const auto again = ragmig({"mig", "apply", file("plan.json"), "--execute"});
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_NE(again.output.find("make a new plan"), std::string::npos) << again.output;
  EXPECT_EQ(read_file(path()), before);
}

TEST_F(Emulated, CreationGoesLargestFirst) {
  json state = h200_state();
  state["gpus"][0]["instances"] = json::array();
  write(state);
  const auto plan = ragmig({"mig", "plan", "--demand", "1g.18gb:2,2g.35gb:1,3g.71gb:1", "-o", file("plan.json")});
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  const auto r = ragmig({"mig", "apply", file("plan.json"), "--execute"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<int> created;
  for (const auto& c : calls()) {
    if (c.rfind("create_gi", 0) == 0) created.push_back(std::stoi(c.substr(c.find("profile=") + 8)));
  }
  EXPECT_EQ(created, (std::vector<int>{k3g, k2g, k1g, k1g})) << r.output;
  state = read();
  EXPECT_EQ(state["gpus"][0]["instances"].size(), 4u);
  for (const auto& gi : state["gpus"][0]["instances"]) EXPECT_EQ(gi["cis"].size(), 1u) << gi.dump();
}

TEST_F(Emulated, TransientInUseIsRetried) {
  json state = h200_state();
  state["gpus"][0]["faults"] = {{"in_use", 2}};
  write(state);
  ASSERT_EQ(ragmig({"mig", "plan", "--demand", "3g.71gb:1", "-o", file("plan.json")}).exit_code, 0);
  const auto r = ragmig({"mig", "apply", file("plan.json"), "--execute"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(layout(), (std::vector<std::string>{"9@0", "9@4"}));
  const auto c = calls();
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[0], "destroy_ci gpu=0 gi=7 ci=0 -> 19");
  EXPECT_EQ(c[1], "destroy_ci gpu=0 gi=7 ci=0 -> 19");
  EXPECT_EQ(c[2], "destroy_ci gpu=0 gi=7 ci=0");
}

TEST_F(Emulated, AnInstanceThatBecameBusyIsNotDestroyed) {
  write(h200_state());
  ASSERT_EQ(ragmig({"mig", "plan", "--demand", "3g.71gb:1", "-o", file("plan.json")}).exit_code, 0);
  json state = read();
  state["gpus"][0]["instances"][2]["cis"][0]["processes"] = 1;  // a job started on 1g.18gb@5 meanwhile
  write(state);
  const std::string before = read_file(path());
  const auto r = ragmig({"mig", "apply", file("plan.json"), "--execute"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("1g.18gb@5 is busy now"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(path()), before);  // checked before the first change: nothing changed
}

TEST_F(Emulated, WithoutPermissionItSaysRootIsNeeded) {
  json state = h200_state();
  state["gpus"][0]["faults"] = {{"no_permission", true}};
  write(state);
  ASSERT_EQ(ragmig({"mig", "plan", "--demand", "3g.71gb:1", "-o", file("plan.json")}).exit_code, 0);
  const auto r = ragmig({"mig", "apply", file("plan.json"), "--execute"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("needs root"), std::string::npos) << r.output;
  EXPECT_EQ(layout(), (std::vector<std::string>{"9@0", "19@4", "19@5"}));
}

TEST_F(Emulated, MigModeIsTurnedOnOnlyWithEnableMig) {
  json state = h200_state();
  state["gpus"][0]["mig_current"] = 0;
  state["gpus"][0]["instances"] = json::array();
  write(state);
  const auto plan = ragmig({"mig", "plan", "--demand", "3g.71gb:2", "--enable-mig", "-o", file("plan.json")});
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  const std::string before = read_file(path());
  const auto refused = ragmig({"mig", "apply", file("plan.json"), "--execute"});
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("unless --enable-mig"), std::string::npos) << refused.output;
  EXPECT_EQ(read_file(path()), before);

  const auto r = ragmig({"mig", "apply", file("plan.json"), "--execute", "--enable-mig"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read()["gpus"][0]["mig_current"], 1);
  EXPECT_EQ(layout(), (std::vector<std::string>{"9@0", "9@4"}));
  EXPECT_EQ(position(calls(), "set_mig_mode gpu=0 mode=1"), 0u);
}

TEST_F(Emulated, AMigModeChangeThatNeedsAResetStopsBeforeAnyInstance) {
  json state = h200_state();
  state["gpus"][0]["mig_current"] = 0;
  state["gpus"][0]["instances"] = json::array();
  state["gpus"][0]["faults"] = {{"enable_needs_reset", true}};
  write(state);
  ASSERT_EQ(ragmig({"mig", "plan", "--demand", "7g.141gb:1", "--enable-mig", "-o", file("plan.json")}).exit_code, 0);
  const auto r = ragmig({"mig", "apply", file("plan.json"), "--execute", "--enable-mig"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("nvidia-smi -r -i 0"), std::string::npos) << r.output;
  EXPECT_EQ(position(calls(), "create_gi"), std::string::npos);
  // Until the reset, `ragmig gpus` shows the change as pending and nothing can be applied.
  const json j = output_json(ragmig({"gpus", "--json"}));
  EXPECT_TRUE(j["gpus"][0]["mig_pending_reset"].get<bool>());
  const auto again = ragmig({"mig", "apply", file("plan.json"), "--execute", "--enable-mig"});
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_NE(again.output.find("waits for a GPU reset"), std::string::npos) << again.output;
}

TEST_F(Emulated, APlanForAnotherGpuIsRefused) {
  write(h200_state());
  ASSERT_EQ(ragmig({"mig", "plan", "--demand", "3g.71gb:1", "-o", file("plan.json")}).exit_code, 0);
  json state = read();
  state["gpus"][0]["uuid"] = "GPU-00000000-1111-2222-3333-444444444444";  // another H200 in the same slot
  write(state);
  const auto r = ragmig({"mig", "apply", file("plan.json"), "--execute"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("the plan was made for GPU-5e1d7c52"), std::string::npos) << r.output;
  EXPECT_TRUE(read()["calls"].empty());
}

TEST_F(Emulated, A100With7InstancesFromEmpty) {
  write({{"gpus", json::array({{{"name", "NVIDIA A100-SXM4-40GB"},
                                {"uuid", "GPU-a100a100-0000-4000-8000-000000000000"},
                                {"memory_mib", 40960},
                                {"mig_current", 1},
                                {"instances", json::array()}}})}});
  const auto plan = ragmig({"mig", "plan", "--demand", "1g.5gb:7", "-o", file("plan.json")});
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  const auto r = ragmig({"mig", "apply", file("plan.json"), "--execute"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(layout(), (std::vector<std::string>{"19@0", "19@1", "19@2", "19@3", "19@4", "19@5", "19@6"}));
  const json j = output_json(ragmig({"gpus", "--json"}));
  ASSERT_EQ(j["slots"].size(), 7u);
  for (const auto& s : j["slots"]) {
    EXPECT_EQ(s["profile"], "1g.5gb");
    EXPECT_EQ(s["memory_mib"], 4864);
  }
}

}  // namespace
}  // namespace ragmig::testing
