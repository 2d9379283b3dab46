// run_command with real processes: stdout and stderr kept apart, exit codes, a command that cannot be
// found, and the time limit, whose kill reaches what the command started too (a wrapper script's children).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <sstream>
#include <string>
#include <thread>

#include "core/atomic_file.h"
#include "core/stop_signal.h"
#include "exec/command_output.h"
#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::exec {
namespace {

TEST(CommandOutput, KeepsStdoutAndStderrApartAndReturnsTheExitCode) {
  const CommandOutput r = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(CommandOutput, MoreOutputThanAPipeHoldsOnBothStreams) {
  const CommandOutput r = run_command({"sh", "-c", "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.size(), 300000u);
  EXPECT_EQ(r.err.size(), 200000u);
}

TEST(CommandOutput, AMissingCommandIs127AndSaysWhy) {
  const CommandOutput r = run_command({"ragmig-no-such-command"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.err.find("ragmig-no-such-command"), std::string::npos) << r.err;
}

TEST(CommandOutput, TheTimeLimitKillsTheCommandAndWhatItStarted) {
  testing::ScratchDir dir;
  const std::string pid_file = (dir / "sleep.pid").string();
  const auto t0 = std::chrono::steady_clock::now();
  const CommandOutput r =
      run_command({"sh", "-c", "sleep 30 & echo $! > '" + pid_file + "'; echo started; wait"}, 0.5);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.out, "started\n");
  std::string pid = read_file(pid_file);
  pid.erase(pid.find_last_not_of('\n') + 1);
  EXPECT_TRUE(testing::process_gone_within(pid, 5))
      << "`sleep 30` (pid " << pid << ") outlived the timed-out command";
}

TEST(CommandOutput, ACommandFromAProcessThatBlocksStopSignalsGetsThemBack) {
  install_stop_handlers();  // blocks SIGTERM and SIGINT here (stop_signal.h), as `ragmig run` does
  // grep, not a shell (dash unblocks every signal as it starts): the mask and ignored set exec left it.
  const CommandOutput r = run_command({"grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string name;
  std::string hex;
  int seen = 0;
  while (lines >> name >> hex) {
    const unsigned long long mask = std::stoull(hex, nullptr, 16);
    for (const int sig : {SIGTERM, SIGINT}) EXPECT_EQ(mask & (1ULL << (sig - 1)), 0ULL) << name << " " << hex;
    ++seen;
  }
  EXPECT_EQ(seen, 2) << r.out;
}

}  // namespace
}  // namespace ragmig::exec
