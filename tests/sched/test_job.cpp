// Need strings, job files and shell-word splitting: round trips, and errors that name what was wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/shell_words.h"
#include "sched/executor.h"
#include "sched/job.h"
#include "sched/slot.h"
#include "support/test_support.h"

namespace ragmig::sched {
namespace {

using ::testing::HasSubstr;

TEST(Need, ParsesEveryForm) {
  struct Row {
    const char* text;
    bool cpu;
    int compute;
    int64_t memory_mb;
    int replicas;
  };
  for (const Row& r : {Row{"cpu:1", true, 0, 0, 1}, Row{"cpu:3", true, 0, 0, 3}, Row{"gpu:2", false, 7, 0, 2},
                       Row{"1g.18gb:1", false, 1, 18 * 1024, 1}, Row{"3g.71gb:2", false, 3, 71 * 1024, 2},
                       Row{"1g.18gb+me:1", false, 1, 18 * 1024, 1}, Row{"20gb:4", false, 1, 20 * 1024, 4}}) {
    const Need n = parse_need(r.text);
    EXPECT_EQ(n.cpu, r.cpu) << r.text;
    EXPECT_EQ(n.min_compute, r.compute) << r.text;
    EXPECT_EQ(n.min_memory_mb, r.memory_mb) << r.text;
    EXPECT_EQ(n.replicas, r.replicas) << r.text;
    EXPECT_EQ(to_string(n), r.text);  // canonical strings round-trip
  }
  EXPECT_EQ(to_string(parse_need("cpu")), "cpu:1");
}

TEST(Need, RejectsMalformed) {
  for (const char* bad : {"", "cpu:0", "cpu:-1", "cpu:x", "tpu:1", "8g.10gb:1", "1g.gb:1", "gpu:1:2", "0gb:1"})
    EXPECT_THROW(parse_need(bad), ConfigError) << bad;
  try {
    parse_need("tpu:1");
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tpu:1"));
    EXPECT_THAT(e.what(), HasSubstr("MIG profile"));
  }
}

TEST(JobSpec, JsonRoundTrip) {
  JobSpec spec;
  spec.name = "sweep-3";
  spec.argv = {"ragmig", "train", "a b.toml"};
  spec.need = parse_need("1g.18gb:2");
  spec.priority = -4;
  spec.estimate_s = 123.5;
  spec.max_retries = 0;
  const JobSpec back = job_spec_from_json(to_json(spec), "test");
  EXPECT_EQ(to_json(back), to_json(spec));
  EXPECT_FALSE(to_json(spec).contains("batch_size"));  // rows of fixed-batch jobs stay as they were
  spec.batch_size = 64;
  spec.min_batch_size = 16;
  const JobSpec resizable = job_spec_from_json(to_json(spec), "test");
  EXPECT_EQ(resizable.batch_size, 64);
  EXPECT_EQ(resizable.min_batch_size, 16);
  EXPECT_TRUE(resizable.resizable());
  EXPECT_FALSE(to_json(spec).contains("work"));  // nor do those whose work nobody counted
  spec.work = {3.2e12, 3.2e10, 32, 90, {30, 90}};
  const JobSpec counted = job_spec_from_json(to_json(spec), "test");
  EXPECT_EQ(counted.work.flops, 3.2e12);
  EXPECT_EQ(counted.work.step_flops, 3.2e10);
  EXPECT_EQ(counted.work.batch_size, 32);
  EXPECT_EQ(counted.work.steps, 90);
  EXPECT_EQ(counted.work.eval_steps, (std::vector<int64_t>{30, 90}));
  EXPECT_EQ(to_json(counted), to_json(spec));
  spec.work.eval_steps = {91};
  EXPECT_THROW(validate(spec), ConfigError) << "an evaluation past its last step";
  EXPECT_THROW(job_spec_from_json({{"name", "x"}}, "row 3"), DataError);
}

// A job's work: its FLOPs, and for a training its steps' FLOPs at their batch (what its progress measures the
// rate by); an evaluation has FLOPs and no steps.
TEST(JobSpec, WorkStepsNeedTheirBatchAndFlops) {
  JobSpec spec;
  spec.argv = {"ragmig", "train", "a.toml"};
  for (const JobSpec::Work& good : {JobSpec::Work{1e12, 1e10, 8}, JobSpec::Work{1e12, 0, 0}, JobSpec::Work{},
                                   JobSpec::Work{1e12, 1e10, 8, 100}}) {
    spec.work = good;
    EXPECT_NO_THROW(validate(spec)) << good.flops << " " << good.step_flops;
  }
  for (const JobSpec::Work& bad :
       {JobSpec::Work{1e12, 1e10, 0}, JobSpec::Work{0, 1e10, 8}, JobSpec::Work{-1, 0, 0}, JobSpec::Work{1, -1, 0},
        JobSpec::Work{1e12, 1e10, 8, 101}, JobSpec::Work{1e12, 0, 0, 5}, JobSpec::Work{1e12, 1e10, 8, -1}}) {
    spec.work = bad;
    try {
      validate(spec);
      ADD_FAILURE() << "no error for flops " << bad.flops << ", step_flops " << bad.step_flops;
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr("job's work"));
    }
  }
}

TEST(JobFile, ReadsArgvOrCmd) {
  testing::ScratchDir dir;
  write_file_atomic(dir / "a.toml",
                    "[job]\nname = \"a\"\nargv = [\"ragmig\", \"train\", \"x.toml\"]\nslots = \"cpu:2\"\npriority = 3\n");
  JobSpec a = read_job_file((dir / "a.toml").string());
  EXPECT_EQ(a.argv, (std::vector<std::string>{"ragmig", "train", "x.toml"}));
  EXPECT_EQ(a.need.replicas, 2);
  EXPECT_EQ(a.priority, 3);
  write_file_atomic(dir / "b.toml", "[job]\ncmd = \"sh -c 'echo hi; exit 3'\"\nestimate_s = 60\n");
  JobSpec b = read_job_file((dir / "b.toml").string());
  EXPECT_EQ(b.argv, (std::vector<std::string>{"sh", "-c", "echo hi; exit 3"}));
  EXPECT_EQ(b.estimate_s, 60);
}

TEST(JobFile, ErrorsNameFileAndKey) {
  testing::ScratchDir dir;
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    write_file_atomic(dir / "j.toml", text);
    try {
      read_job_file((dir / "j.toml").string());
      ADD_FAILURE() << "no error for: " << text;
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr("j.toml")) << text;
      EXPECT_THAT(e.what(), HasSubstr(needle)) << text;
    }
  };
  expect_error("[job]\nargv = [\"a\"]\npriorty = 3\n", "priorty");
  expect_error("[job]\nargv = \"a b\"\n", "array of strings");
  expect_error("[job]\nargv = [\"a\", 3]\n", "job.argv");
  expect_error("[job]\nname = \"no command\"\n", "no command");
  expect_error("[job]\nargv = [\"a\"]\ncmd = \"b\"\n", "not both");
  expect_error("[job]\ncmd = \"a 'b\"\n", "unterminated");
  expect_error("[job]\nargv = [\"a\"]\nslots = \"cpu:0\"\n", "cpu:0");
  expect_error("[job]\nargv = [\"a\"]\nmax_retries = -1\n", "max_retries");
  expect_error("[job]\nargv = [\"a\"]\nslots = \"20gb:1\"\nmin_batch_size = 8\n", "needs job.batch_size");
  expect_error("[job]\nargv = [\"a\"]\nslots = \"20gb:1\"\nbatch_size = 8\nmin_batch_size = 16\n",
               "job.min_batch_size 16 exceeds job.batch_size 8");
  expect_error("[job]\nargv = [\"a\"]\nbatch_size = -2\n", "must be >= 0");
  write_file_atomic(dir / "ok.toml", "[job]\nargv = [\"a\"]\nslots = \"20gb:1\"\nbatch_size = 64\nmin_batch_size = 8\n");
  const JobSpec ok = read_job_file((dir / "ok.toml").string());
  EXPECT_EQ(ok.batch_size, 64);
  EXPECT_EQ(ok.min_batch_size, 8);
}

TEST(ShellWords, SplitsLikeAShell) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_shell_words("  a  b\tc "), (V{"a", "b", "c"}));
  EXPECT_EQ(split_shell_words("a 'b c' \"d e\""), (V{"a", "b c", "d e"}));
  EXPECT_EQ(split_shell_words("a\\ b 'it'\\''s' \"q\\\"x\\\\\""), (V{"a b", "it's", "q\"x\\"}));
  EXPECT_EQ(split_shell_words("x=''"), (V{"x="}));
  EXPECT_EQ(split_shell_words("''"), (V{""}));
  EXPECT_EQ(split_shell_words("\"$HOME\""), (V{"$HOME"}));  // no expansion
  EXPECT_THROW(split_shell_words("a 'b"), ConfigError);
  EXPECT_THROW(split_shell_words("a \"b"), ConfigError);
  EXPECT_THROW(split_shell_words("a\\"), ConfigError);
  // Quoted or escaped, shell syntax is a plain character; bare, it is refused with the line wrapped in sh -c.
  EXPECT_EQ(split_shell_words("echo 'a | b' \"c > d\" e\\;f $ 5$"), (V{"echo", "a | b", "c > d", "e;f", "$", "5$"}));
  for (const std::string line : {"echo a | cat", "a > f", "a; b", "a && b", "a &", "cat < f", "echo `id`",
                                 "echo $HOME", "echo ${X}", "echo $(id)"}) {
    try {
      split_shell_words(line);
      ADD_FAILURE() << "accepted: " << line;
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("shell syntax"), std::string::npos) << what;
      EXPECT_NE(what.find(join_shell_words({"sh", "-c", line})), std::string::npos) << what;
    }
  }
}

TEST(Slots, UnrunnableReasonCountsTheSlotsThatFit) {
  std::vector<Slot> slots(2);
  slots[0].id = "cpu:0";
  slots[1].id = "cpu:1";
  EXPECT_EQ(unrunnable_reason(parse_need("cpu:2"), slots), "");
  const std::string cpu = unrunnable_reason(parse_need("cpu:3"), slots);
  EXPECT_NE(cpu.find("unrunnable: needs 3 CPU slots at once; this scheduler has 2 (of 2: cpu:0, cpu:1)"),
            std::string::npos)
      << cpu;
  EXPECT_NE(cpu.find("--cpu-slots"), std::string::npos) << cpu;
  Slot mig;
  mig.id = "mig:0:1g.18gb@0";
  mig.kind = SlotKind::Mig;
  mig.profile = "1g.18gb";
  mig.compute = 1;
  mig.nominal_memory_mb = 18 * 1024;
  slots.push_back(mig);
  EXPECT_EQ(unrunnable_reason(parse_need("1g.18gb:1"), slots), "");
  EXPECT_NE(unrunnable_reason(parse_need("3g.71gb:1"), slots).find("needs 1 GPU slices with at least 3g.71gb"),
            std::string::npos);
  slots[2].reserved_for = Slot::kVacating;  // about to be destroyed: does not count
  EXPECT_NE(unrunnable_reason(parse_need("1g.18gb:1"), slots), "");
}

// Fuzz: any argv joined and split again is the same argv; random text never crashes the splitter.
TEST(ShellWords, FuzzRoundTrip) {
  std::mt19937_64 rng(42);
  const std::string alphabet = "ab \t'\"\\$`;|&()*?\n=-_./é";
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<std::string> words(rng() % 5);
    for (auto& w : words) {
      const size_t len = rng() % 8;
      for (size_t i = 0; i < len; ++i) w += alphabet[rng() % alphabet.size()];
    }
    EXPECT_EQ(split_shell_words(join_shell_words(words)), words) << join_shell_words(words);
    std::string noise;
    for (size_t i = 0, n = rng() % 20; i < n; ++i) noise += alphabet[rng() % alphabet.size()];
    try {
      (void)split_shell_words(noise);
    } catch (const ConfigError&) {
    }
  }
}

// Gangs of two schedulers on one host both start at job 1, attempt 1: their rendezvous ports differ by run
// folder; one attempt keeps its port, its retry gets another.
TEST(RendezvousPort, DiffersByRunFolderAndAttemptAndStaysInRange) {
  Launch a;
  a.job = 1;
  a.attempt_id = 1;
  a.attempt_number = 1;
  a.run_dir = "/tmp/state-a/runs/job-1";
  std::set<int> ports;
  for (int i = 0; i < 50; ++i) {
    Launch other = a;
    other.run_dir = "/tmp/state-" + std::to_string(i) + "/runs/job-1";
    const int port = rendezvous_port(other);
    EXPECT_GE(port, kRendezvousPortLo);
    EXPECT_LT(port, kRendezvousPortHi);
    ports.insert(port);
  }
  EXPECT_GE(ports.size(), 48u) << "50 state folders, nearly as many ports";
  // The attempt launched again (an executor restarted, adopting it): other slots and events offset, the same port.
  Launch again = a;
  again.slots.resize(2);
  again.events_offset = 4096;
  EXPECT_EQ(rendezvous_port(again), rendezvous_port(a));
  Launch retry = a;
  retry.attempt_id = 2;
  retry.attempt_number = 2;
  EXPECT_NE(rendezvous_port(retry), rendezvous_port(a));
}

}  // namespace
}  // namespace ragmig::sched
