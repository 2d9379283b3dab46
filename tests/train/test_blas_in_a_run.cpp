// Which BLAS serves a real run's fp32 products, seen from outside in its start event (model/blas_binding.h):
// LibTorch's own where PyTorch's wheel carries one; with the system's OpenBLAS preloaded ahead of it (the binding
// the link order gave before f7f6117) the event says so and ragmig-torch warns (apps/torch_main.cpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/atomic_file.h"
#include "model/blas_binding.h"
#include "support/sanitizers.h"
#include "train_fixture.h"

namespace ragmig::testing {
namespace {

TEST(BlasInARun, TheStartEventNamesTheBlasAndAWrongOneIsWarnedOf) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  if (!model::blas_binding().libtorch_exports) GTEST_SKIP() << "this LibTorch has no BLAS of its own";
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  const auto train = [&](const std::string& name, std::vector<std::string> argv) {
    argv.insert(argv.end(), {RAGMIG_BINARY, "train", (dir / "cfg.toml").string(), "--run-dir", (dir / name).string(),
                             "--set", "train.max_steps=1", "--set", "train.device=cpu"});
    return run_process(argv);
  };
  const auto own = train("own", {});
  ASSERT_EQ(own.exit_code, 0) << own.output;
  EXPECT_EQ(start_event(dir / "own").value("blas", ""), "libtorch_cpu.so (LibTorch's own)");
  EXPECT_EQ(own.output.find("not LibTorch's own BLAS"), std::string::npos) << own.output;

  const std::filesystem::path openblas = "/lib/x86_64-linux-gnu/libopenblas.so.0";
  if (!std::filesystem::exists(openblas)) GTEST_SKIP() << "no " << openblas << " to put ahead of LibTorch";
  RAGMIG_SKIP_UNDER_SANITIZER("a preloaded library would come before the sanitizer's runtime");
  const auto other = train("other", {"/usr/bin/env", "LD_PRELOAD=" + openblas.string()});
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_EQ(start_event(dir / "other").value("blas", ""), "libopenblas.so.0 (ahead of LibTorch's own)");
  EXPECT_NE(other.output.find("warning: fp32 products run on libopenblas.so.0, not LibTorch's own BLAS"),
            std::string::npos)
      << other.output;
}

}  // namespace
}  // namespace ragmig::testing
