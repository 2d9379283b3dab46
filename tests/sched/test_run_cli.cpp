// `ragmig submit | run | status | cancel` with real processes and signals: retries with back-off, cancel,
// the grace period, one scheduler per state folder, submitting while the scheduler runs.
#include <gmock/gmock.h>
#include <signal.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "sched/store.h"
#include "sched_fixture.h"

namespace ragmig::testing {
namespace {

using ::testing::HasSubstr;
using SchedCli = SchedFixture;

TEST_F(SchedCli, FailedWorkerIsRetriedWithBackoffThenFails) {
  const int64_t id = submit({"--cmd", "sh -c 'echo boom >&2; exit 3'", "--max-retries", "2"});
  const auto run = ragmig({"run", "--until-empty", "--cpu-slots", "1", "--backoff", "0.3"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto j = job(id);
  EXPECT_EQ(j["state"], "failed");
  EXPECT_EQ(j["attempts"], 3);
  EXPECT_THAT(j["reason"].get<std::string>(), HasSubstr("exit code 3"));
  EXPECT_THAT(j["reason"].get<std::string>(), HasSubstr("boom"));  // the log's last line, in status
  // Back-off: 0.3 s before the first retry, 0.6 s before the second.
  std::vector<double> ends, starts;
  for (const auto& a : j["attempt_list"]) {
    starts.push_back(a["started_at"]);
    ends.push_back(a["ended_at"]);
    EXPECT_EQ(a["outcome"], "failed");
    EXPECT_EQ(a["exit_code"], 3);
  }
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_GE(starts[1] - ends[0], 0.3);
  EXPECT_GE(starts[2] - ends[1], 0.6);
  const auto text = ragmig({"status"});
  EXPECT_THAT(text.output, HasSubstr("failed"));
  EXPECT_THAT(text.output, HasSubstr("exit code 3"));
}

// A worker's events.jsonl is any command's: lines whose fields have other types than the protocol's ("event": 1,
// "step": "x", "batch_size": 1.5) are kept but read as nothing, and the scheduler runs on (before 2026-12-05,
// "event": 1 threw out of the scheduler's loop and stopped `ragmig run`). The good lines around them still count.
TEST_F(SchedCli, EventLinesOfOtherTypesAreReadAsNothing) {
  write_file_atomic(dir_ / "worker.sh",
                    "e=\"$RAGMIG_RUN_DIR/events.jsonl\"\n"
                    "echo '{\"event\":\"start\",\"step\":0}' >> \"$e\"\n"
                    "echo '{\"event\":1,\"step\":3}' >> \"$e\"\n"
                    "echo '{\"event\":null}' >> \"$e\"\n"
                    "echo '{\"event\":\"progress\",\"step\":\"x\",\"time\":[],\"batch_size\":1.5}' >> \"$e\"\n"
                    "echo '{\"event\":\"checkpoint\",\"step\":{}}' >> \"$e\"\n"
                    "echo '[1, 2]' >> \"$e\"\n"
                    "echo '{\"event\":\"progress\",\"step\":7,\"time\":1.0,\"batch_size\":8}' >> \"$e\"\n");
  const int64_t id = submit({"--cmd", "sh " + (dir_ / "worker.sh").string()});
  const auto run = ragmig({"run", "--until-empty", "--cpu-slots", "1"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto j = job(id);
  EXPECT_EQ(j["state"], "done") << j.dump(2);
  EXPECT_EQ(j["step"], 7) << "the last good progress line";
}

// Exit 75 unasked means "requeue me, I go on from my checkpoint" (a gang that lost a replica). A worker that
// does so without writing a new checkpoint would loop forever: that counts as a failure, with back-off.
TEST_F(SchedCli, ExitingResumableWithoutProgressCountsAsAFailure) {
  const int64_t id = submit({"--cmd", "sh -c 'exit 75'", "--max-retries", "1"});
  const auto run = ragmig({"run", "--until-empty", "--cpu-slots", "1", "--backoff", "0"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto j = job(id);
  EXPECT_EQ(j["state"], "failed");
  EXPECT_EQ(j["attempts"], 2);
  EXPECT_THAT(j["reason"].get<std::string>(), HasSubstr("exit code 75"));
}

TEST_F(SchedCli, SubmitWhileRunningCancelAndGracePeriod) {
  auto scheduler = start_scheduler({"--cpu-slots", "2", "--grace", "1"}, "a");
  // A job that ignores SIGTERM: cancelling it takes the SIGKILL after the grace period.
  const int64_t stubborn =
      submit({"--cmd", "sh -c 'trap \"\" TERM; touch \"$RAGMIG_RUN_DIR/trapped\"; sleep 60'", "--name", "stubborn"});
  const int64_t quick = submit({"--cmd", "sh -c 'echo $RAGMIG_JOB_ID $RAGMIG_SLOT $RAGMIG_ATTEMPT > $RAGMIG_RUN_DIR/env.txt; pwd > $RAGMIG_RUN_DIR/cwd.txt'"});
  ASSERT_TRUE(wait_for([&](const auto& s) { return state_of(s, stubborn) == "running" && state_of(s, quick) == "done"; }, 30));
  const auto slots = status()["slots"];
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_TRUE(slots[0]["job"] == stubborn || slots[1]["job"] == stubborn);
  // Running is not yet deaf to SIGTERM: a cancel that came before the shell's trap would end it with signal 15.
  ASSERT_TRUE(wait_until_exists(std::filesystem::path(job(stubborn)["run_dir"].get<std::string>()) / "trapped"));

  const auto cancel = ragmig({"cancel", std::to_string(stubborn)});
  EXPECT_THAT(cancel.output, HasSubstr("stops it"));
  ASSERT_TRUE(wait_for([&](const auto& s) { return state_of(s, stubborn) == "cancelled"; }, 30));
  EXPECT_THAT(job(stubborn)["reason"].get<std::string>(), HasSubstr("signal 9"));
  // The worker saw the job protocol's environment, in its run folder, and ran where it was submitted.
  const auto quick_job = job(quick);
  EXPECT_EQ(quick_job["state"], "done");
  const std::string run_dir = quick_job["run_dir"];
  const std::string env = read_file(std::filesystem::path(run_dir) / "env.txt");
  EXPECT_THAT(env, ::testing::MatchesRegex(std::to_string(quick) + " cpu:[01] 1\n"));
  EXPECT_EQ(read_file(std::filesystem::path(run_dir) / "cwd.txt"), std::filesystem::current_path().string() + "\n");

  // A second scheduler on the same state folder is refused.
  const auto second = ragmig({"run", "--until-empty"});
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_THAT(second.output, HasSubstr("another scheduler"));

  // A queued job cancelled before it starts never runs.
  scheduler->signal(SIGTERM);
  EXPECT_EQ(scheduler->wait(), 0);
  const int64_t never = submit({"--cmd", "sh -c 'touch ran.txt'"});
  EXPECT_THAT(ragmig({"cancel", std::to_string(never)}).output, HasSubstr("cancelled"));
  ASSERT_EQ(ragmig({"run", "--until-empty", "--cpu-slots", "1"}).exit_code, 0);
  EXPECT_EQ(job(never)["attempts"], 0);
  EXPECT_EQ(job(never)["state"], "cancelled");
}

TEST_F(SchedCli, ShutdownRequeuesRunningJobsAndRestartFinishesThem) {
  // Exits 75 on SIGTERM (as `ragmig train` does after its checkpoint), else succeeds after 2 s.
  const int64_t id = submit({"--cmd", "sh -c 'trap \"exit 75\" TERM; touch \"$RAGMIG_RUN_DIR/trapped\"; sleep 2 & wait'"});
  auto scheduler = start_scheduler({"--cpu-slots", "1"}, "a");
  ASSERT_TRUE(wait_for([&](const auto& s) { return state_of(s, id) == "running"; }, 30));
  ASSERT_TRUE(wait_until_exists(std::filesystem::path(job(id)["run_dir"].get<std::string>()) / "trapped"));
  scheduler->signal(SIGTERM);
  EXPECT_EQ(scheduler->wait(), 0);
  auto j = job(id);
  EXPECT_EQ(j["state"], "queued");
  EXPECT_EQ(j["attempt_list"][0]["outcome"], "preempted");
  ASSERT_EQ(ragmig({"run", "--until-empty", "--cpu-slots", "1"}).exit_code, 0);
  j = job(id);
  EXPECT_EQ(j["state"], "done");
  EXPECT_EQ(j["attempts"], 2);
}

TEST_F(SchedCli, GangJobsStartEveryReplicaWithItsRank) {
  // Two replicas: each writes its torchrun variables; the gang only starts when two slots are free.
  const int64_t gang = submit({"--cmd", "sh -c 'echo $RANK $WORLD_SIZE $MASTER_ADDR $RAGMIG_SLOT > $RAGMIG_RUN_DIR/rank$RANK.txt'",
                               "--slots", "cpu:2"});
  // One replica fails: the other is stopped (it would sleep 60 s) and the attempt fails with its code.
  const int64_t broken = submit({"--cmd", "sh -c 'if [ $RANK = 1 ]; then exit 4; fi; sleep 60'", "--slots", "cpu:2",
                                 "--max-retries", "0"});
  const auto run = ragmig({"run", "--until-empty", "--cpu-slots", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto g = job(gang);
  EXPECT_EQ(g["state"], "done");
  const std::filesystem::path run_dir = g["run_dir"].get<std::string>();
  EXPECT_THAT(read_file(run_dir / "rank0.txt"), ::testing::MatchesRegex("0 2 127.0.0.1 cpu:[01]\n"));
  EXPECT_THAT(read_file(run_dir / "rank1.txt"), ::testing::MatchesRegex("1 2 127.0.0.1 cpu:[01]\n"));
  EXPECT_NE(read_file(run_dir / "rank0.txt").substr(13), read_file(run_dir / "rank1.txt").substr(13))
      << "each replica on its own slot";
  const auto b = job(broken);
  EXPECT_EQ(b["state"], "failed");
  EXPECT_EQ(b["attempt_list"][0]["exit_code"], 4);
  EXPECT_LT(b["attempt_list"][0]["ended_at"].get<double>() - b["attempt_list"][0]["started_at"].get<double>(), 30)
      << "the surviving replica was stopped, not waited for";
}

// The table shows what each waiting job is expected to take (what sjf, ljf and srtf order by), "-" where nobody
// knows; `status --json` has it as estimate_s.
TEST_F(SchedCli, TheTableShowsEachWaitingJobsEstimate) {
  submit({"--cmd", "true", "--name", "short-one", "--estimate", "90"});
  submit({"--cmd", "true", "--name", "long-one", "--estimate", "7200"});
  submit({"--cmd", "true", "--name", "unknown-one"});
  const auto text = ragmig({"status"}).output;
  std::map<std::string, std::vector<std::string>> rows;  // name -> the row's columns
  std::vector<std::string> header;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> columns{std::istream_iterator<std::string>(words), {}};
    if (!columns.empty() && columns[0] == "ID" && header.empty()) header = columns;
    if (columns.size() > 1) rows[columns[1]] = columns;
  }
  const auto est = std::find(header.begin(), header.end(), "EST");
  ASSERT_NE(est, header.end()) << text;
  const auto at = static_cast<size_t>(est - header.begin());
  ASSERT_GT(rows["short-one"].size(), at) << text;
  EXPECT_EQ(rows["short-one"][at], "90s") << text;
  EXPECT_EQ(rows["long-one"][at], "2.0h") << text;
  EXPECT_EQ(rows["unknown-one"][at], "-") << text;
}

// A job that states its work is priced by the scheduler at the rate its jobs measure; until one has, the price is
// a placeholder (the median job an hour), which `status` shows as "?" and `status ID` names as such.
TEST_F(SchedCli, AnEstimateBeforeAnyRateIsMeasuredIsAPlaceholder) {
  sched::JobSpec spec;
  spec.name = "stated-work";
  spec.argv = {"true"};
  spec.work = {3.6e12, 1.2e10, 16, 300};
  spec.estimate_s = 3600;  // as the scheduler prices the median job before any rate is measured
  int64_t id = 0;
  {
    sched::Store store(state());
    id = store.submit(spec, 1.0);
    store.set_scheduler_info({12345, "sjf", 2.0, "", std::nullopt});
  }
  const auto estimate_column = [&] {
    const std::string text = ragmig({"status"}).output;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      if (line.find("stated-work") != std::string::npos) {
        std::istringstream words(line);
        std::vector<std::string> columns{std::istream_iterator<std::string>(words), {}};
        return columns.size() > 9 ? columns[9] : text;  // ID NAME STATE SLOT PRI ATT STEP SAMPLES/S LOSS EST
      }
    return text;
  };
  EXPECT_EQ(estimate_column(), "?");
  EXPECT_NE(ragmig({"status", std::to_string(id)}).output.find("a placeholder until a job measures its rate"),
            std::string::npos);
  EXPECT_TRUE(status()["scheduler"]["work_rate"].is_null());
  sched::Store(state()).set_scheduler_info({12345, "sjf", 3.0, "", 1e9});
  EXPECT_EQ(estimate_column(), "60m");
  EXPECT_EQ(ragmig({"status", std::to_string(id)}).output.find("placeholder"), std::string::npos);
  EXPECT_EQ(status()["scheduler"]["work_rate"], 1e9);
}

// A CPU slot's utilisation is the share of its cores its job uses (CPU seconds per second over the slot's
// threads, OMP_NUM_THREADS), measured from the job's start: a job busy on every thread it was given reads near
// 100 % (never past it), a sleeping one near 0.
TEST_F(SchedCli, ASlotsUtilisationIsTheShareOfItsCoresItsJobUses) {
  auto scheduler = start_scheduler({"--cpu-slots", "1"}, "usage");
  const auto measured = [&](int64_t id) -> std::optional<double> {
    const auto now = status();
    for (const auto& slot : now["slots"])
      if (slot["job"] == id && slot["utilization"].is_number()) return slot["utilization"].get<double>();
    return std::nullopt;
  };
  const auto wait_measured = [&](int64_t id) {
    std::optional<double> u;
    for (int i = 0; i < 150 && !u; ++i) {
      u = measured(id);
      if (!u) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return u;
  };
  // Loops bounded (about a minute here), so that none spins on if the test stops half-way (jobs outlive a
  // scheduler that is killed).
  const int64_t busy = submit({"--cmd", "sh -c 'for t in $(seq $OMP_NUM_THREADS); do "
                                        "(i=0; while [ $i -lt 80000000 ]; do i=$((i+1)); done) & done; wait'"});
  ASSERT_TRUE(wait_measured(busy)) << "no utilisation measured for the busy job in 30 s";
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // a whole window after its start's
  const auto busy_u = measured(busy);
  ASSERT_TRUE(busy_u);
  EXPECT_GT(*busy_u, 0.15);  // all of the slot's threads spin (less where other work shares the cores)
  EXPECT_LE(*busy_u, 1.05);
  ragmig({"cancel", std::to_string(busy)});
  ASSERT_TRUE(wait_for([&](const auto& s) { return state_of(s, busy) == "cancelled"; }, 30));

  const int64_t idle = submit({"--cmd", "sleep 30"});
  const auto idle_u = wait_measured(idle);
  ASSERT_TRUE(idle_u) << "no utilisation measured for the sleeping job in 30 s";
  EXPECT_LT(*idle_u, 0.05);
  ragmig({"cancel", std::to_string(idle)});
  scheduler->signal(SIGTERM);
  EXPECT_EQ(scheduler->wait(), 0);
}

// A running job without steps (an evaluation) shows what its worker last said it was doing, in the table's REASON
// column and in `status ID`.
TEST_F(SchedCli, ARunningJobShowsWhatItsWorkerLastSaid) {
  auto scheduler = start_scheduler({"--cpu-slots", "1"}, "said");
  const int64_t id = submit({"--cmd", "sh -c 'echo \"{\\\"event\\\": \\\"progress\\\", \\\"message\\\": "
                                      "\\\"embedding 5183 passages\\\"}\" >> $RAGMIG_RUN_DIR/events.jsonl; sleep 30'"});
  const auto said = [&](const auto&) { return ragmig({"status"}).output.find("embedding 5183") != std::string::npos; };
  ASSERT_TRUE(wait_for(said, 30)) << ragmig({"status"}).output;
  EXPECT_NE(ragmig({"status", std::to_string(id)}).output.find("  now: embedding 5183 passages"), std::string::npos);
  ragmig({"cancel", std::to_string(id)});
  scheduler->signal(SIGTERM);
  EXPECT_EQ(scheduler->wait(), 0);
}

TEST_F(SchedCli, BadInputIsAClearError) {
  auto r = ragmig({"status"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("no scheduler state here"));
  r = ragmig({"submit", "--cmd", "x", "--slots", "tpu:1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("tpu:1"));
  r = ragmig({"submit", "--cmd", "sh -c 'unterminated"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unterminated"));
  r = ragmig({"run", "--policy", "lottery", "--until-empty"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown policy 'lottery'"));
  submit({"--cmd", "true"});
  r = ragmig({"cancel", "77"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("no job 77"));
  r = ragmig({"submit"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace ragmig::testing
