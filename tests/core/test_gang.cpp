// wait_gang with real children: the first failure stops the rest, a stop request reaches every process, and
// one that ignores SIGTERM is killed after the grace period.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "core/gang.h"
#include "core/spawn.h"

namespace ragmig {
namespace {

pid_t sh(const std::string& script) {
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", script};
  return spawn_process(o);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(Gang, TheFirstFailureStopsTheOthers) {
  const auto start = std::chrono::steady_clock::now();
  const GangExit e = wait_gang({sh("exec sleep 30"), sh("exit 3"), sh("exec sleep 30")});
  EXPECT_LT(seconds_since(start), 20);
  EXPECT_EQ(e.codes, (std::vector<int>{128 + SIGTERM, 3, 128 + SIGTERM}));
  EXPECT_EQ(e.first_signal, 0);
}

TEST(Gang, ASignalDeathIsReportedAndAllSucceedingIsZero) {
  EXPECT_EQ(wait_gang({sh("exit 0"), sh("exit 0")}).codes, (std::vector<int>{0, 0}));
  const GangExit e = wait_gang({sh("kill -KILL $$"), sh("exec sleep 30")});
  EXPECT_EQ(e.codes[0], 128 + SIGKILL);
  EXPECT_EQ(e.first_signal, SIGKILL);
}

TEST(Gang, StopRequestsAndTheGracePeriod) {
  // The stop is asked for once the second shell has set its trap (a stop before it would end that shell too).
  const std::string trapped = ::testing::TempDir() + "gang-trapped-" + std::to_string(::getpid());
  std::filesystem::remove(trapped);
  bool asked = false;
  GangWaitOptions o;
  o.stop_requested = [&] { return !asked && (asked = std::filesystem::exists(trapped)); };
  o.kill_after_s = 0.5;
  const auto start = std::chrono::steady_clock::now();
  const GangExit e = wait_gang({sh("exec sleep 30"), sh("trap '' TERM; touch '" + trapped + "'; exec sleep 30")}, o);
  std::filesystem::remove(trapped);
  EXPECT_LT(seconds_since(start), 20);
  EXPECT_EQ(e.codes, (std::vector<int>{128 + SIGTERM, 128 + SIGKILL}));  // the one that ignored TERM: killed
}

}  // namespace
}  // namespace ragmig
