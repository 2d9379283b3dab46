// [alerts] exec with real processes: the command reads the alert on its stdin, one alert after another in
// order, a failing command is logged, one that outlives its time limit is killed, and none of it blocks the
// caller.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/atomic_file.h"
#include "monitor/alert_hook.h"
#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::monitor {
namespace {

namespace fs = std::filesystem;

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void wait_until_reaped(AlertHook& hook, double limit_s) {
  const double until = seconds() + limit_s;
  while (hook.running() > 0 && seconds() < until) {
    hook.reap(seconds());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST(AlertHook, TheCommandReadsTheAlertOnStdin) {
  testing::ScratchDir dir;
  std::vector<std::string> log;
  // One at a time, in order: a chat hears "firing" before "cleared". Each command holds a lock folder while it
  // runs; one that finds it taken ran beside another and says so.
  const std::string d = dir.path().string();
  AlertHook hook("mkdir '" + d + "/lock' || echo overlap >> '" + d + "/overlaps'; cat >> '" + d +
                     "/got.jsonl'; sleep 0.05; rmdir '" + d + "/lock'",
                 30, [&](const std::string& l) { log.push_back(l); });
  std::string want;
  for (int i = 0; i < 10; ++i) {
    const std::string line = R"({"event":"alert","n":)" + std::to_string(i) + "}";
    hook.run(line, seconds());
    want += line + "\n";
  }
  wait_until_reaped(hook, 20);
  EXPECT_EQ(hook.running(), 0u);
  EXPECT_EQ(read_file(dir / "got.jsonl"), want);
  EXPECT_FALSE(fs::exists(dir / "overlaps")) << "two commands ran at once";
  EXPECT_TRUE(log.empty()) << log.front();
}

TEST(AlertHook, FailuresAreLoggedAndSlowCommandsKilledWithoutBlocking) {
  std::vector<std::string> log;
  AlertHook failing("exit 3", 30, [&](const std::string& l) { log.push_back(l); });
  failing.run("{}", seconds());
  wait_until_reaped(failing, 10);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("exited 3"), std::string::npos) << log[0];

  // The shell forks (a pipeline, a script, a background job): the kill reaches what it started too.
  testing::ScratchDir dir;
  const fs::path pid_file = dir / "sleep.pid";
  AlertHook slow("sleep 30 & echo $! > '" + pid_file.string() + "'; wait", 0.3,
                 [&](const std::string& l) { log.push_back(l); });
  const double t0 = seconds();
  slow.run("{}", t0);
  EXPECT_LT(seconds() - t0, 1.0) << "run() waited for the command";
  EXPECT_EQ(slow.running(), 1u);
  wait_until_reaped(slow, 10);
  EXPECT_LT(seconds() - t0, 5.0);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_NE(log[1].find("killed"), std::string::npos) << log[1];
  ASSERT_TRUE(fs::exists(pid_file));
  std::string sleep_pid = read_file(pid_file);
  sleep_pid.erase(sleep_pid.find_last_not_of('\n') + 1);
  EXPECT_TRUE(testing::process_gone_within(sleep_pid, 5))
      << "`sleep 30` (pid " << sleep_pid << ") outlived the killed command";

  // A command that never reads its stdin does not hurt the writer (no SIGPIPE).
  AlertHook deaf("true", 30, [&](const std::string& l) { log.push_back(l); });
  for (int i = 0; i < 5; ++i) deaf.run(std::string(1000, 'x'), seconds());
  wait_until_reaped(deaf, 10);
  EXPECT_EQ(log.size(), 2u);
}

TEST(AlertHook, NoCommandRunsNothing) {
  AlertHook none("", 30);
  none.run("{}", 0);
  EXPECT_EQ(none.running(), 0u);
}

}  // namespace
}  // namespace ragmig::monitor
