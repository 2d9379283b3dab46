// train.precision = auto falls back to fp32 on a CPU without native bf16, and says why in the start event;
// with bf16 it trains under autocast. The CPU is made to look one way or the other by RAGMIG_CPU_BF16, so
// both branches run on any machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "core/atomic_file.h"
#include "train_fixture.h"

namespace ragmig::testing {
namespace {

TEST(PrecisionFallback, AutoFollowsTheCpuAndSaysWhy) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  for (const std::string bf16 : {"0", "1"}) {
    ::setenv("RAGMIG_CPU_BF16", bf16.c_str(), 1);
    const auto run = dir / ("run-" + bf16);
    auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", run.string(), "--quiet", "--set",
                         "train.max_steps=3", "--set", "train.device=cpu"});
    ::unsetenv("RAGMIG_CPU_BF16");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto start = start_event(run);
    EXPECT_EQ(start.value("precision", ""), bf16 == "1" ? "bf16" : "fp32") << start.dump();
    if (bf16 == "0") {
      EXPECT_NE(start.value("precision_reason", "").find("no native bf16"), std::string::npos) << start.dump();
    }
    EXPECT_TRUE(std::filesystem::exists(run / "model/model.safetensors"));
  }
}

// train.bf16_residual takes effect under bf16 only (the start event says whether the stream is bf16), trains, and
// changes the numbers (a loss other than autocast's fp32 stream's, close to it).
TEST(PrecisionFallback, TheBf16ResidualStreamOnlyUnderBf16) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  std::map<std::string, double> loss;
  for (const std::string run_name : {"fp32-on", "bf16-on", "bf16-off"}) {
    const auto run = dir / run_name;
    auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", run.string(), "--quiet", "--set",
                         "train.max_steps=4", "--set", "train.log_every=1", "--set", "train.device=cpu", "--set",
                         "train.precision=\"" + run_name.substr(0, 4) + "\"", "--set",
                         std::string("train.bf16_residual=") + (run_name.ends_with("on") ? "true" : "false")});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(start_event(run).value("bf16_residual", false), run_name == "bf16-on") << run_name;
    for (const auto& e : read_events(run))
      if (e["event"] == "progress") loss[run_name] = e["loss"];
    ASSERT_TRUE(std::isfinite(loss[run_name])) << run_name;
  }
  EXPECT_NE(loss["bf16-on"], loss["bf16-off"]);
  EXPECT_NEAR(loss["bf16-on"], loss["bf16-off"], 0.05 * std::abs(loss["bf16-off"]));
}

}  // namespace
}  // namespace ragmig::testing
