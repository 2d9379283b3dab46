// `ragmig gpus` and `ragmig mig ...` run as real processes: the CPU fallback without NVML, plans and their
// exit codes, the dry run of apply, and bad plan files refused with the key named.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::testing {
namespace {

// Runs the real binary with RAGMIG_NVML_LIBRARY set to `nvml` ("" = leave the environment alone).
ProcessResult ragmig(std::vector<std::string> args, const std::string& nvml = "") {
  const char* old = std::getenv("RAGMIG_NVML_LIBRARY");
  const std::string saved = old ? old : "";
  if (!nvml.empty()) ::setenv("RAGMIG_NVML_LIBRARY", nvml.c_str(), 1);
  args.insert(args.begin(), RAGMIG_BINARY);
  ProcessResult r = run_process(args);
  if (!nvml.empty()) {
    if (old) ::setenv("RAGMIG_NVML_LIBRARY", saved.c_str(), 1); else ::unsetenv("RAGMIG_NVML_LIBRARY");
  }
  return r;
}

TEST(GpusCli, WithoutNvmlReportsCpuSlotsAndThatNvmlIsAbsent) {
  const auto r = ragmig({"gpus", "--json", "--cpu-slots", "3"}, "/no/such/libnvidia-ml.so.1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = output_json(r);
  EXPECT_FALSE(j["nvml"]["available"].get<bool>());
  EXPECT_EQ(j["nvml"]["status"], "absent");
  EXPECT_NE(j["nvml"]["detail"].get<std::string>().find("/no/such/libnvidia-ml.so.1"), std::string::npos);
  EXPECT_TRUE(j["cpu_fallback"].get<bool>());
  ASSERT_EQ(j["slots"].size(), 3u);
  EXPECT_EQ(j["slots"][0]["id"], "cpu:0");
  EXPECT_EQ(j["slots"][0]["kind"], "cpu");
  EXPECT_EQ(j["slots"][0]["cuda_visible_devices"], "");
}

TEST(GpusCli, ABrokenNvmlLibraryIsNamedAndFallsBack) {
  const auto r = ragmig({"gpus", "--json", "--cpu-slots", "1"}, "libz.so.1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = output_json(r);
  EXPECT_EQ(j["nvml"]["status"], "broken");
  EXPECT_NE(j["nvml"]["detail"].get<std::string>().find("lacks the symbol nvmlInit_v2"), std::string::npos) << r.output;
  EXPECT_EQ(j["slots"].size(), 1u);
}

TEST(GpusCli, AnNvmlWithoutDriverIsReported) {
  const auto r = ragmig({"gpus", "--json", "--cpu-slots", "1"}, NVML_WITHOUT_DRIVER);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = output_json(r);
  EXPECT_EQ(j["nvml"]["status"], "init_failed");
  EXPECT_NE(j["nvml"]["detail"].get<std::string>().find("Driver Not Loaded"), std::string::npos) << r.output;
  EXPECT_TRUE(j["cpu_fallback"].get<bool>());
}

TEST(GpusCli, ThisMachine) {
  const auto r = ragmig({"gpus", "--json", "--cpu-slots", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = output_json(r);
  if (!j["nvml"]["available"].get<bool>()) {
    EXPECT_TRUE(j["cpu_fallback"].get<bool>());
    EXPECT_EQ(j["slots"].size(), 2u);
  } else {
    for (const auto& g : j["gpus"]) {
      EXPECT_FALSE(g["name"].get<std::string>().empty());
      EXPECT_TRUE(g.contains("mig_enabled"));
      EXPECT_TRUE(g["instances"].is_array());
    }
  }
  const auto text = ragmig({"gpus", "--cpu-slots", "2"}, "/no/such/lib.so");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("NVML: absent"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("cpu:1"), std::string::npos) << text.output;
  EXPECT_EQ(ragmig({"gpus", "--cpu-slots", "-2"}).exit_code, 2);
}

TEST(MigCli, ProfilesOfH200) {
  const auto r = ragmig({"mig", "profiles", "--gpu", "H200"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}) {
    EXPECT_NE(r.output.find(name), std::string::npos) << name;
  }
  EXPECT_NE(r.output.find("{0,2,4,6}"), std::string::npos) << r.output;
  const auto bad = ragmig({"mig", "profiles", "--gpu", "V100"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("no MIG profile catalog"), std::string::npos) << bad.output;
}

TEST(MigCli, LayoutsCountsOfA100) {
  const auto r = ragmig({"mig", "layouts", "--gpu", "A100-40GB", "--maximal", "--profiles",
                         "1g.5gb,2g.10gb,3g.20gb,4g.20gb,7g.40gb", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = output_json(r);
  EXPECT_EQ(j["count"], 19);
  EXPECT_EQ(j["mixes"], 14);
}

TEST(MigCli, PlanThatCannotPlaceEverythingExitsNonZero) {
  const auto r = ragmig({"mig", "plan", "--gpu", "H200", "--demand", "1g.18gb:5,3g.71gb:1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("target:  3g.71gb@4+1g.18gb@0+1g.18gb@1+1g.18gb@2+1g.18gb@3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unplaced: 1g.18gb:1"), std::string::npos) << r.output;

  const auto j_run = ragmig({"mig", "plan", "--gpu", "H200", "--demand", "1g.18gb:5,3g.71gb:1", "--json"});
  EXPECT_EQ(j_run.exit_code, 1);
  const auto j = output_json(j_run);
  EXPECT_FALSE(j["complete"].get<bool>());
  ASSERT_EQ(j["unplaced"].size(), 1u);
  EXPECT_EQ(j["unplaced"][0]["job"], "1g.18gb");
  EXPECT_EQ(j["unplaced"][0]["count"], 1);
}

TEST(MigCli, PlanKeepsBusyInstances) {
  const auto r = ragmig({"mig", "plan", "--gpu", "H200", "--current", "7g.141gb@0", "--busy", "7g.141gb@0", "--demand",
                         "1g.18gb:1"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("steps: none"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unplaced: 1g.18gb:1 (no room"), std::string::npos) << r.output;
}

TEST(MigCli, PlanRefusesBadInput) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--gpu", "H200", "--demand", "1g.5gb:1"}, "not a MIG profile of H200-141GB"},
      {{"--gpu", "H200", "--demand", "1g.18gb:0"}, "job count"},
      {{"--gpu", "H200", "--demand", "lots"}, "neither a MIG profile"},
      {{"--gpu", "H200", "--demand", "1g.18gb:1", "--current", "3g.71gb@1"}, "may start only"},
      {{"--gpu", "H200", "--demand", "1g.18gb:1", "--current", "7g.141gb@0", "--busy", "1g.18gb@0"}, "not a valid layout"},
      {{"--gpu", "Z9000", "--demand", "1g.18gb:1"}, "no MIG profile catalog"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"mig", "plan"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = ragmig(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.expected << " in:\n" << r.output;
  }
}

TEST(MigCli, PlanForTheMachineWithoutAGpuAsksForAModel) {
  const auto r = ragmig({"mig", "plan", "--demand", "1g.18gb:1"}, "/no/such/libnvidia-ml.so.1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--gpu"), std::string::npos) << r.output;
}

TEST(MigCli, PlanFileAppliesAsADryRun) {
  ScratchDir dir;
  const std::string plan = (dir / "plan.json").string();
  const auto made = ragmig({"mig", "plan", "--gpu", "H200", "--index", "3", "--current", "7g.141gb@0", "--demand",
                            "3g.71gb:2", "-o", plan});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  for (const auto& extra : std::vector<std::vector<std::string>>{{}, {"--dry-run"}}) {
    std::vector<std::string> args = {"mig", "apply", plan};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = ragmig(args, "/no/such/libnvidia-ml.so.1");  // a dry run needs no NVML
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const size_t destroy = r.output.find("nvidia-smi mig -i 3 -gi <id of 7g.141gb@0> -dgi");
    const size_t first = r.output.find("nvidia-smi mig -i 3 -cgi 9:0 -C");
    const size_t second = r.output.find("nvidia-smi mig -i 3 -cgi 9:4 -C");
    ASSERT_NE(destroy, std::string::npos) << r.output;
    ASSERT_NE(first, std::string::npos) << r.output;
    ASSERT_NE(second, std::string::npos) << r.output;
    EXPECT_LT(destroy, first);
    EXPECT_LT(first, second);
  }
  // Executing needs NVML: without it, a clear failure and nothing else.
  const auto exec = ragmig({"mig", "apply", plan, "--execute"}, "/no/such/libnvidia-ml.so.1");
  EXPECT_EQ(exec.exit_code, 1) << exec.output;
  EXPECT_NE(exec.output.find("cannot load NVML"), std::string::npos) << exec.output;
  EXPECT_EQ(ragmig({"mig", "apply", plan, "--execute", "--dry-run"}).exit_code, 2);
}

TEST(MigCli, MigModeOffIsNotChangedWithoutEnableMig) {
  ScratchDir dir;
  const std::string plan = (dir / "plan.json").string();
  auto made = ragmig({"mig", "plan", "--gpu", "H200", "--demand", "7g.141gb:1", "--json"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto j = output_json(made);
  j["gpus"][0]["mig_enabled"] = false;
  j["gpus"][0]["steps"].insert(j["gpus"][0]["steps"].begin(), nlohmann::json{{"op", "enable_mig"}});
  write_file_atomic(plan, j.dump(2));
  const auto dry = ragmig({"mig", "apply", plan});
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("nothing would change without --enable-mig"), std::string::npos) << dry.output;
  EXPECT_EQ(dry.output.find("-cgi"), std::string::npos) << dry.output;
  const auto enabled = ragmig({"mig", "apply", plan, "--enable-mig"});
  EXPECT_NE(enabled.output.find("nvidia-smi -i 0 -mig 1"), std::string::npos) << enabled.output;
  const auto exec = ragmig({"mig", "apply", plan, "--execute"});
  EXPECT_EQ(exec.exit_code, 2) << exec.output;
  EXPECT_NE(exec.output.find("unless --enable-mig"), std::string::npos) << exec.output;
}

TEST(MigCli, BadPlanFileNamesTheKey) {
  ScratchDir dir;
  const std::string plan = (dir / "plan.json").string();
  auto made = ragmig({"mig", "plan", "--gpu", "H200", "--demand", "3g.71gb:1", "--json"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto j = output_json(made);
  j["gpus"][0]["steps"][0]["instance"] = "3g.71gb@2";
  write_file_atomic(plan, j.dump());
  const auto r = ragmig({"mig", "apply", plan});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("gpus[0].steps[0].instance"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ragmig::testing
