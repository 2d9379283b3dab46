// wait_gang with real children: the first failure stops the rest, a stop request reaches every process, and
// one that ignores SIGTERM is killed after the grace period.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>

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
  int polls = 0;
  GangWaitOptions o;
  o.stop_requested = [&] { return ++polls == 5; };
  o.kill_after_s = 0.5;
  const auto start = std::chrono::steady_clock::now();
  const GangExit e = wait_gang({sh("exec sleep 30"), sh("trap '' TERM; exec sleep 30")}, o);
  EXPECT_LT(seconds_since(start), 20);
  EXPECT_EQ(e.codes, (std::vector<int>{128 + SIGTERM, 128 + SIGKILL}));  // the one that ignored TERM: killed
}

}  // namespace
}  // namespace ragmig
