// The two binaries of the command line: `ragmig`, free of LibTorch, and `ragmig-torch` beside it, which the
// front hands train and eval to. (Every test that trains through RAGMIG_BINARY, signals included,
// goes through that hand-over too.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/atomic_file.h"
#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kFront = RAGMIG_BINARY;
const fs::path kTorch = fs::path(RAGMIG_BINARY).parent_path() / "ragmig-torch";

bool loads_libtorch(const fs::path& binary) {
  const ProcessResult r = run_process({"/usr/bin/ldd", binary.string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output.find("libtorch") != std::string::npos || r.output.find("libc10") != std::string::npos;
}

TEST(FrontDoor, OnlyRagmigTorchLoadsLibTorch) {
  ASSERT_TRUE(fs::exists(kTorch)) << kTorch;
  EXPECT_FALSE(loads_libtorch(kFront)) << "status, submit and run would pay LibTorch's start-up";
  EXPECT_TRUE(loads_libtorch(kTorch));
}

TEST(FrontDoor, HelpListsEveryCommandAndTorchCommandsAnswerThroughTheFront) {
  const ProcessResult help = run_process({kFront.string(), "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* name : {"train", "eval", "batch", "submit", "status", "cancel", "run", "gpus", "mig", "sim", "models"})
    EXPECT_NE(help.output.find(std::string("\n  ") + name + " "), std::string::npos) << name << "\n" << help.output;
  const ProcessResult train_help = run_process({kFront.string(), "train", "--help"});
  EXPECT_EQ(train_help.exit_code, 0);
  EXPECT_NE(train_help.output.find("Usage: ragmig train"), std::string::npos) << train_help.output;
  ScratchDir dir;
  write_file_atomic(dir / "bad.toml", "[train]\nmax_steps = \"many\"\n");
  const ProcessResult bad =
      run_process({kFront.string(), "train", (dir / "bad.toml").string(), "--run-dir", (dir / "run").string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("ragmig train: config error"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("train.max_steps"), std::string::npos) << bad.output;
}

TEST(FrontDoor, AMissingRagmigTorchIsNamed) {
  ScratchDir dir;
  fs::copy_file(kFront, dir / "ragmig");
  fs::permissions(dir / "ragmig", fs::perms::owner_all);
  const ProcessResult r = run_process({(dir / "ragmig").string(), "eval", "--help"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot start " + (dir / "ragmig-torch").string()), std::string::npos) << r.output;
  // The commands of the front itself need nothing beside it.
  const ProcessResult sim = run_process({(dir / "ragmig").string(), "sim", "--help"});
  EXPECT_EQ(sim.exit_code, 0) << sim.output;
}

// One exit code for a missing input in every command: 2, as for a malformed one, naming the path.
TEST(FrontDoor, AMissingInputFileIsBadInputEverywhere) {
  const std::vector<std::vector<std::string>> cases = {
      {"sim", "--workload", "philly:/no/such/trace.csv", "--cluster", "8xH200"},
      {"eval", "--data", "/no/such/beir", "--retriever", "bm25"},
      {"sim", "--workload", "sweep:3", "--cluster", "1xH200", "--timeline", "/no/such/timeline.csv"},
      {"train", "/no/such/train.toml"},
  };
  for (auto args : cases) {
    args.insert(args.begin(), kFront);
    const ProcessResult r = run_process(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << ": " << r.output;
    EXPECT_NE(r.output.find("/no/such/"), std::string::npos) << args[1] << ": " << r.output;
  }
}

}  // namespace
}  // namespace ragmig::testing
