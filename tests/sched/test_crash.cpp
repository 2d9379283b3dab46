// The scheduler killed with SIGKILL at random moments, ten times, during a 20-job run and restarted each
// time: every job ends done exactly once, none is lost, none runs twice (not even at the same time).
#include <gmock/gmock.h>
#include <signal.h>

#include <fmt/format.h>

#include <map>
#include <random>

#include "core/atomic_file.h"
#include "sched_fixture.h"

namespace ragmig::testing {
namespace {

using SchedCrash = SchedFixture;

TEST_F(SchedCrash, SigkilledTenTimesLosesNothingAndRunsNothingTwice) {
  const std::string marks = (dir_ / "marks").string();
  std::filesystem::create_directories(marks);
  // Each job takes its own mkdir lock while it runs (a second copy running at the same time fails with 9),
  // appends its id to done.txt once finished, and takes 1-2.5 s.
  std::mt19937_64 rng(2026);
  std::vector<int64_t> ids;
  for (int i = 0; i < 20; ++i) {
    const double seconds = 1.0 + 0.1 * static_cast<double>(rng() % 16);
    const std::string cmd = fmt::format(
        "sh -c 'mkdir {0}/running-$RAGMIG_JOB_ID || exit 9; sleep {1}; echo $RAGMIG_JOB_ID >> {0}/done.txt; "
        "rmdir {0}/running-$RAGMIG_JOB_ID'",
        marks, seconds);
    ids.push_back(submit({"--cmd", cmd, "--max-retries", "0"}));
  }
  for (int kill = 0; kill < 10; ++kill) {
    const std::string tag = std::to_string(kill);
    auto scheduler = start_scheduler({"--cpu-slots", "3", "--tick", "0.1"}, tag);
    // Odd kills land anywhere from start-up on; even ones once the scheduler has started a job, so that
    // some attempts outlive their scheduler whatever the machine's speed.
    if (kill % 2 == 0) {
      const auto log = dir_ / ("scheduler-" + tag + ".log");
      auto started_one = [&] { return std::filesystem::exists(log) && read_file(log).find("-> running") != std::string::npos; };
      for (int i = 0; i < 200 && !started_one(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + static_cast<int>(rng() % 800)));
    scheduler->signal(SIGKILL);
    scheduler->wait();
  }
  const auto last = ragmig({"run", "--until-empty", "--cpu-slots", "3", "--tick", "0.1"});
  ASSERT_EQ(last.exit_code, 0) << last.output;

  std::map<int64_t, int> finished;
  const std::string done = read_file(std::filesystem::path(marks) / "done.txt");
  for (size_t pos = 0; pos < done.size();) {
    const size_t nl = done.find('\n', pos);
    finished[std::stoll(done.substr(pos, nl - pos))]++;
    pos = nl + 1;
  }
  int outlived = 0;  // attempts that outlived their scheduler: adopted, or found ended by the next one
  for (int64_t id : ids) {
    const auto j = job(id);
    EXPECT_EQ(j["state"], "done") << "job " << id << ": " << j.dump();
    EXPECT_EQ(finished[id], 1) << "job " << id << " ran to completion " << finished[id] << " times";
    int done_transitions = 0;
    for (const auto& t : j["history"]) {
      done_transitions += t["to"] == "done";
      const std::string reason = t["reason"];
      outlived += reason.find("adopted") != std::string::npos || reason.find("while no scheduler") != std::string::npos;
    }
    EXPECT_EQ(done_transitions, 1) << "job " << id;
    for (const auto& a : j["attempt_list"]) EXPECT_NE(a["exit_code"], 9) << "job " << id << " ran twice at once";
  }
  // With ten kills during 20 jobs of a second or two, some attempts must have outlived a scheduler.
  EXPECT_GT(outlived, 0);
}

}  // namespace
}  // namespace ragmig::testing
