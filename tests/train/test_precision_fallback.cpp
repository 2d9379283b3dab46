// train.precision = auto falls back to fp32 on a CPU without native bf16, and says why in the start event;
// with bf16 it trains under autocast. The CPU is made to look one way or the other by RAGMIG_CPU_BF16, so
// both branches run on any machine.
#include <gtest/gtest.h>

#include <cstdlib>

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

}  // namespace
}  // namespace ragmig::testing
