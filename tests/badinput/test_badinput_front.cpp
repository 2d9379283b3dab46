// Issue 25's rows, each the exact case a hostile user tried, with the exit code and the words of the answer:
// a job no slot can ever hold (refused at submit, or marked unrunnable, and --until-empty does not wait for
// it), a command that cannot be executed (refused at submit, or failed at once without retries), shell syntax
// in --cmd (refused, pointing to sh -c), a missing trace (exit 2), implausible trace numbers, JSON errors in ragmig's words with file,
// line and column, an integer out of range, and a second
// Ctrl-C while the scheduler waits out its grace period (the jobs are killed at once and resume later), and
// jobs side by side on CPU slots sharing the cores (row 15: each its share of threads, idle threads asleep).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"
#include "core/cpu_threads.h"
#include "sched/sched_fixture.h"
#include "train/train_fixture.h"

namespace ragmig::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class BadInput : public SchedFixture {};

// Row 6, at submit: the state's scheduler ran with 2 CPU slots; cpu:99 can never start there.
TEST_F(BadInput, Row6SubmitRefusesMoreCpuSlotsThanTheSchedulerOffers) {
  submit({"--cmd", "true"});
  ASSERT_EQ(ragmig({"run", "--cpu-slots", "2", "--until-empty", "--tick", "0.1"}).exit_code, 0);
  const auto r = ragmig({"submit", "--cmd", "true", "--slots", "cpu:99"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--slots cpu:99: needs 99 CPU slots at once; this scheduler has 2 (of 2: cpu:0, cpu:1)"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("`ragmig run --cpu-slots N` offers more"), std::string::npos) << r.output;
  EXPECT_EQ(ragmig({"submit", "--cmd", "true", "--slots", "cpu:2"}).exit_code, 0);
}

// Row 6, in the scheduler: submitted before any scheduler said what it offers, the job is marked unrunnable
// with the reason, and --until-empty exits once only such jobs remain.
TEST_F(BadInput, Row6UnrunnableJobsAreMarkedAndDoNotHoldUntilEmpty) {
  const int64_t big = submit({"--cmd", "true", "--slots", "cpu:3"});
  const int64_t fine = submit({"--cmd", "true"});
  auto scheduler = start_scheduler({"--cpu-slots", "2", "--until-empty", "--tick", "0.1"}, "unrunnable");
  ASSERT_TRUE(scheduler->wait_exit(30)) << "--until-empty waited for a job that can never run\n"
                                        << read_file(dir_ / "scheduler-unrunnable.log");
  const json s = status();
  EXPECT_EQ(state_of(s, fine), "done");
  EXPECT_EQ(state_of(s, big), "queued");
  const std::string reason = job(big)["reason"];
  EXPECT_EQ(reason.rfind("unrunnable: needs 3 CPU slots at once; this scheduler has 2", 0), 0u) << reason;
  EXPECT_NE(read_file(dir_ / "scheduler-unrunnable.log").find("can never run here"), std::string::npos);
}

// Row 7: a command named by a path that is not there (or not executable) is refused at submit; a bare name
// that PATH does not have fails on its first attempt, not retried.
TEST_F(BadInput, Row7CommandsThatCannotBeExecuted) {
  auto r = ragmig({"submit", "--cmd", "/no/such/binary --flag"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot run /no/such/binary: no such file"), std::string::npos) << r.output;
  write_file_atomic(dir_ / "script.sh", "echo hi\n");
  ::chmod((dir_ / "script.sh").c_str(), 0644);
  r = ragmig({"submit", "--cmd", (dir_ / "script.sh").string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not executable"), std::string::npos) << r.output;

  const int64_t id = submit({"--cmd", "no-such-command-ragmig-test", "--max-retries", "3"});
  ASSERT_EQ(ragmig({"run", "--until-empty", "--cpu-slots", "1", "--tick", "0.1", "--backoff", "0.1"}).exit_code, 0);
  const json j = job(id);
  EXPECT_EQ(j["state"], "failed") << j.dump(1);
  EXPECT_EQ(j["attempts"], 1) << "retried a command that cannot run: " << j.dump(1);
  const std::string reason = j["reason"];
  EXPECT_NE(reason.find("cannot be run"), std::string::npos) << reason;
  EXPECT_NE(reason.find("not retried"), std::string::npos) << reason;
  EXPECT_NE(reason.find("no-such-command-ragmig-test"), std::string::npos) << reason;
}

// A `ragmig train` job's config is read at submit to count its work: one that is there and would fail the job
// (a misspelt key, a --set of the wrong type) is refused with the file, the key and exit 2, and nothing is
// queued; one that is not there yet (a job before it may write it) is queued with a warning, without an estimate.
TEST_F(BadInput, ATrainingJobsBadConfigIsRefusedAtSubmit) {
  write_file_atomic(dir_ / "typo.toml", "[data]\nbeir = \"x\"\n[train]\nmax_stepz = 3\n");
  auto r = ragmig({"submit", "--cmd", "ragmig train " + (dir_ / "typo.toml").string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("typo.toml:4: unknown key 'train.max_stepz'"), std::string::npos) << r.output;
  write_file_atomic(dir_ / "ok.toml", "[data]\nbeir = \"x\"\n");
  r = ragmig({"submit", "--cmd", "ragmig train " + (dir_ / "ok.toml").string() + " --set train.lr=abc"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--set train.lr"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(state())) << "a refused job left a state folder behind";
  r = ragmig({"submit", "--cmd", "ragmig train " + (dir_ / "later.toml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("not counted"), std::string::npos) << r.output;
  EXPECT_EQ(status()["jobs"].size(), 1u);
}

// Row 8: shell syntax outside quotes would not do what it says without a shell: refused, with the sh -c form.
TEST_F(BadInput, Row8ShellOperatorsInCmdAreRefused) {
  const auto r = ragmig({"submit", "--cmd", "echo a | cat"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'|' at column 8 of the command is shell syntax"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sh -c 'echo a | cat'"), std::string::npos) << r.output;
  write_file_atomic(dir_ / "job.toml", "[job]\ncmd = \"train > log.txt\"\n");
  const auto f = ragmig({"submit", (dir_ / "job.toml").string()});
  EXPECT_EQ(f.exit_code, 2) << f.output;
  EXPECT_NE(f.output.find("job.toml: job.cmd: '>' at column 7"), std::string::npos) << f.output;
  EXPECT_EQ(ragmig({"submit", "--cmd", "sh -c 'echo a | cat'"}).exit_code, 0);
}

// Row 14: Ctrl-C once: the scheduler asks its jobs to checkpoint and waits out --grace (60 s here) for one that
// ignores SIGTERM; Ctrl-C again: it kills that job now and exits, and the job is requeued.
TEST_F(BadInput, Row14ASecondCtrlCKillsTheJobsNow) {
  const int64_t stubborn =
      submit({"--cmd", "sh -c 'trap \"\" TERM; touch \"$RAGMIG_RUN_DIR/trapped\"; sleep 120'", "--name", "stubborn"});
  auto scheduler = start_scheduler({"--grace", "60", "--tick", "0.1"}, "ctrlc");
  ASSERT_TRUE(wait_for([&](const json& s) { return state_of(s, stubborn) == "running"; }, 30));
  // Running is not yet deaf to SIGTERM: a stop that came before the shell's trap would end the job at once.
  ASSERT_TRUE(wait_until_exists(std::filesystem::path(job(stubborn)["run_dir"].get<std::string>()) / "trapped"));
  scheduler->signal(SIGINT);
  EXPECT_FALSE(scheduler->wait_exit(2)) << "the first Ctrl-C did not wait for the job to checkpoint";
  const auto t0 = std::chrono::steady_clock::now();
  scheduler->signal(SIGINT);
  ASSERT_TRUE(scheduler->wait_exit(15)) << read_file(dir_ / "scheduler-ctrlc.log");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 15);
  EXPECT_NE(read_file(dir_ / "scheduler-ctrlc.log").find("asked again to stop"), std::string::npos);
  const json j = job(stubborn);
  EXPECT_EQ(j["state"], "queued") << j.dump(1);
  EXPECT_NE(j["reason"].get<std::string>().find("preempted"), std::string::npos) << j.dump(1);
}

// Row 10: a missing trace is bad input like every other missing input: exit 2, naming the file.
TEST_F(BadInput, Row10AMissingTraceIsBadInput) {
  const auto r = run_process({RAGMIG_BINARY, "sim", "--workload", "philly:/no/such.csv", "--cluster", "8xV100"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("input error: /no/such.csv: cannot open for reading"), std::string::npos) << r.output;
}

// Without --throughputs the simulator looks for MISO's table in the shared data folder: where it is not there, it
// says which file it looked for and how to point at it, and a miso workload (which cannot run without it) stops.
TEST_F(BadInput, Row10AMissingThroughputTableIsNamed) {
  auto r = run_process({"/usr/bin/env", "RAGMIG_DATA=/no/such/data", RAGMIG_BINARY, "sim", "--workload", "miso:4",
                        "--cluster", "1xA100-40GB:mig=auto"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(
      r.output.find("miso:N needs MISO's per-slice table: /no/such/data/traces/miso-a100-mig-iteration-seconds.txt "
                    "does not exist (set RAGMIG_DATA to the shared data folder, or give --throughputs)"),
      std::string::npos)
      << r.output;
  r = run_process({"/usr/bin/env", "RAGMIG_DATA=/no/such/data", RAGMIG_BINARY, "sim", "--workload", "sweep:4",
                   "--cluster", "1xA100-40GB"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("throughputs: none: /no/such/data/traces/miso-a100-mig-iteration-seconds.txt does not exist"),
            std::string::npos)
      << r.output;
}

// Row 11: a trace's number far past any real time (duration 1e308) is a corrupt field: refused with the line,
// never printed as nan or a 300-digit average; a zero duration prints no nan either.
TEST_F(BadInput, Row11ImplausibleTraceNumbersAreRefused) {
  write_file_atomic(dir_ / "huge.csv", "timestamp,duration,num_gpus\n2017-10-09 07:01:55,1e308,1\n");
  auto r = run_process(
      {RAGMIG_BINARY, "sim", "--workload", "philly:" + (dir_ / "huge.csv").string(), "--cluster", "8xV100"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("huge.csv:2: duration must be a number from 0 to 1e+09, got '1e308'"), std::string::npos)
      << r.output;
  write_file_atomic(dir_ / "zero.csv", "timestamp,duration,num_gpus\n2017-10-09 07:01:55,0,1\n");
  r = run_process({RAGMIG_BINARY, "sim", "--workload", "philly:" + (dir_ / "zero.csv").string(), "--cluster", "8xV100"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("nan"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("inf%"), std::string::npos) << r.output;
}

// Row 12: a corpus line or a model's config.json that is not JSON: the file, the line and column, in ragmig's
// words (no "[json.exception.parse_error.101]").
TEST_F(BadInput, Row12JsonErrorsNameTheFileLineAndColumn) {
  std::string corpus;
  for (int i = 0; i < 60; ++i)
    corpus += i == 56 ? "{\"_id\": \"d56\", \"text\": oops}\n"
                      : json{{"_id", "d" + std::to_string(i)}, {"text", "passage " + std::to_string(i)}}.dump() + "\n";
  std::filesystem::create_directories(dir_ / "beir" / "qrels");
  std::filesystem::create_directories(dir_ / "model");
  write_file_atomic(dir_ / "beir" / "corpus.jsonl", corpus);
  write_file_atomic(dir_ / "beir" / "queries.jsonl", "{\"_id\": \"q0\", \"text\": \"passage\"}\n");
  write_file_atomic(dir_ / "beir" / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq0\td0\t1\n");
  const std::string beir = (dir_ / "beir").string();
  auto r = run_process({RAGMIG_BINARY, "eval", "--data", beir, "--retriever", "bm25", "--no-cache"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("corpus.jsonl:57: not valid JSON: column 24: invalid literal"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("json.exception"), std::string::npos) << r.output;

  write_file_atomic(dir_ / "beir" / "corpus.jsonl", json{{"_id", "d0"}, {"text", "passage"}}.dump() + "\n");
  write_file_atomic(dir_ / "model" / "config.json", "{\"hidden_size\": 32,, }\n");
  write_file_atomic(dir_ / "model" / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\npassage\n");
  r = run_process({RAGMIG_BINARY, "eval", "--data", beir, "--retriever", "dense", "--model", (dir_ / "model").string(),
                   "--no-cache"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("config.json: not valid JSON: line 1, column 20: unexpected ','"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("json.exception"), std::string::npos) << r.output;
}

// Row 13: an integer TOML cannot hold is out of range, not "a string".
TEST_F(BadInput, Row13AnIntegerOutOfRangeIsSaidSo) {
  const auto r = run_process({RAGMIG_BINARY, "train", RAGMIG_SOURCE_DIR "/examples/train-squad-tiny.toml", "--run-dir",
                              (dir_ / "run").string(), "--set", "train.max_steps=99999999999999999999"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--set train.max_steps: integer out of range"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("9223372036854775807"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "run")) << "a refused config left a run folder behind";
}

// Row 15: a tiny trainer slowed down 100x beside other ragmig runs because every job started one OpenMP thread
// per core and those threads spun while waiting (bench/train/shared_cores.sh measures it). A job on CPU slots
// gets its share of the cores as OMP_NUM_THREADS (whatever the scheduler's own environment says) and sleeping
// idle threads; `ragmig train` takes both, as its start event shows.
TEST_F(BadInput, Row15JobsOnCpuSlotsShareTheCoresAndSleepWhenIdle) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  const fs::path env_file = dir_ / "env.txt";
  const int64_t shell = submit({"--cmd", "sh -c 'echo \"$OMP_NUM_THREADS $OMP_WAIT_POLICY\" > " + env_file.string() + "'"});
  write_squad_pairs(dir_ / "pairs.jsonl", 240);
  write_file_atomic(dir_ / "cfg.toml", tiny_config(dir_ / "pairs.jsonl"));
  const int64_t trainer = submit({"--cmd", "ragmig train " + (dir_ / "cfg.toml").string() + " --quiet --set train.max_steps=2 --set train.threads=0"});
  const auto r = run_process({"/usr/bin/env", "-u", "OMP_WAIT_POLICY", "-u", "GOMP_SPINCOUNT", "OMP_NUM_THREADS=64",
                              RAGMIG_BINARY, "run", "--state", state(), "--cpu-slots", "2", "--until-empty", "--tick", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(state_of(status(), shell), "done");
  ASSERT_EQ(state_of(status(), trainer), "done") << job(trainer).dump(1);
  const int share = cpu_slot_threads(2);
  EXPECT_EQ(read_file(env_file), std::to_string(share) + " PASSIVE\n");
  json start;
  std::ifstream events(fs::path(job(trainer)["run_dir"].get<std::string>()) / "events.jsonl");
  for (std::string line; std::getline(events, line);)
    if (auto e = json::parse(line); e["event"] == "start") start = e;
  ASSERT_TRUE(start.is_object());
  EXPECT_EQ(start["threads"], share) << start.dump();
  EXPECT_EQ(start["omp_wait_policy"], "PASSIVE") << start.dump();
}

}  // namespace
}  // namespace ragmig::testing
