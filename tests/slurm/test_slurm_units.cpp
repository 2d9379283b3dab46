// The Slurm executor's pure parts, table-driven: squeue's and sinfo's machine-readable output read back, and
// the sbatch script of an attempt (resources per slot kind, quoting, gangs), run by a real bash.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "exec/slurm_config.h"
#include "exec/slurm_executor.h"
#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::exec {
namespace {

TEST(SlurmParse, SqueueLinesAndTheirRefusals) {
  EXPECT_EQ(parse_squeue("12|RUNNING\n13|PENDING\n\n"),
            (std::map<std::string, std::string>{{"12", "RUNNING"}, {"13", "PENDING"}}));
  EXPECT_TRUE(parse_squeue("").empty());
  EXPECT_EQ(parse_squeue("12 |\tRUNNING\r\n"), (std::map<std::string, std::string>{{"12", "RUNNING"}}));
  for (const std::string bad : {"12 RUNNING\n", "|RUNNING\n", "12|\n", "12| \n", "12|RUNNING|x\n"}) {
    try {
      parse_squeue("1|RUNNING\n" + bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("squeue output line 2"), std::string::npos) << e.what();
    }
  }
}

TEST(SlurmParse, SlotsFromSinfo) {
  // A MIG node, a node of typed whole GPUs listed in two partitions, an untyped GPU node, a CPU-only node.
  const std::string sinfo = "mig1|64|gpu:1g.18gb:2(S:0),gpu:3g.71gb:1\n"
                            "h100a|32|gpu:h100:2\nh100a|32|gpu:h100:2\n"
                            "old|16|gpu:1\n"
                            "cpu1|4|(null)\n";
  const auto slots = slurm_slots(sinfo, 0);
  std::vector<std::string> ids, profiles;
  for (const auto& s : slots) {
    ids.push_back(s.id);
    profiles.push_back(s.profile);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"mig1:1g.18gb:0", "mig1:1g.18gb:1", "mig1:3g.71gb:0", "h100a:h100:0",
                                           "h100a:h100:1", "old:gpu:0", "cpu1:cpu:0", "cpu1:cpu:1", "cpu1:cpu:2",
                                           "cpu1:cpu:3"}));
  EXPECT_EQ(slots[0].kind, sched::SlotKind::Mig);
  EXPECT_EQ(slots[0].compute, 1);
  EXPECT_EQ(slots[2].compute, 3);
  EXPECT_EQ(slots[2].nominal_memory_mb, 71 * 1024);
  EXPECT_EQ(slots[3].kind, sched::SlotKind::Gpu);
  EXPECT_EQ(slots[3].compute, 7);
  EXPECT_EQ(slots[6].kind, sched::SlotKind::Cpu);
  EXPECT_NE(slots[0].group, slots[3].group);
  EXPECT_TRUE(sched::fits(sched::parse_need("1g.18gb:1"), slots[0]));
  EXPECT_FALSE(sched::fits(sched::parse_need("2g.35gb:1"), slots[0]));
  // A type listed twice (per socket) numbers its GPUs on.
  const auto twice = slurm_slots("n|4|gpu:a100:2(S:0),gpu:a100:1(S:1)\n", 0);
  ASSERT_EQ(twice.size(), 3u);
  EXPECT_EQ(twice[2].id, "n:a100:2");
  // A GRES type shaped like a profile of more compute slices than a GPU has is a type of whole GPUs.
  EXPECT_EQ(slurm_slots("n|4|gpu:8g.71gb:1\n", 0).at(0).kind, sched::SlotKind::Gpu);
  // --cpu-slots N: N per node, beside GPUs too.
  EXPECT_EQ(slurm_slots("mig1|64|gpu:1g.18gb:1\n", 2).size(), 3u);
  // Counts read whole: "8x" or "4 " is not taken as 8 or 4 (std::stoi read them so).
  for (const std::string bad : {"n1|x|(null)\n", "n1|4\n", "n1|4|gpu:many\n", "|4|(null)\n", "n1|8x|(null)\n",
                                "n1|-4|(null)\n", "n1|4|gpu:h100:2x\n", "n1|4|gpu:h100:99999999999\n",
                                "n1|60000|(null)\nn2|60000|(null)\n"})
    EXPECT_THROW(slurm_slots(bad, 0), DataError) << bad;
}

TEST(SlurmConfig, TheSweepsTableFillsWhatTheCommandLineLeftEmpty) {
  SlurmOptions cli;
  cli.partition = "debug";
  cli.sbatch_options = {"--exclusive"};
  const std::string sweep = "[sweep]\nname = \"x\"\n[slurm]\npartition = \"gpu\"\naccount = \"ir\"\ntime = \"1:00:00\"\n"
                            "sbatch = [\"--constraint=h200\"]\narray_limit = 3\n";
  const SlurmOptions o = merge_slurm_table(sweep, "s.toml", cli);
  EXPECT_EQ(o.partition, "debug") << "the command line wins";
  EXPECT_EQ(o.account, "ir");
  EXPECT_EQ(o.time_limit, "1:00:00");
  EXPECT_EQ(o.sbatch_options, (std::vector<std::string>{"--constraint=h200", "--exclusive"}));
  EXPECT_EQ(o.array_limit, 3);
  EXPECT_EQ(merge_slurm_table("[sweep]\n", "s.toml", cli).partition, "debug") << "no table, no change";
  const std::string example = std::string(RAGMIG_SOURCE_DIR) + "/examples/slurm/sweep.toml";
  EXPECT_EQ(merge_slurm_table(read_file(example), example, {}).array_limit, 8);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[slurm]\npartition = 3\n", "s.toml:2: [slurm] partition: expected a string"},
      {"[slurm]\nnodes = 2\n", "s.toml:2: [slurm] nodes: unknown key"},
      {"[slurm]\nsbatch = \"--exclusive\"\n", "s.toml:2: [slurm] sbatch: expected a list"},
      {"[slurm]\nsbatch = [\"exclusive\"]\n", "s.toml:2: [slurm] sbatch: expected options like"},
      // Words that would split on sbatch's command line, or end the script's comment line that shows it.
      {"[slurm]\nsbatch = [\"--constraint=a100\\nrm -rf x\"]\n", "s.toml:2: [slurm] sbatch: expected options like"},
      {"[slurm]\nsbatch = [\"--exclusive --mem=0\"]\n", "s.toml:2: [slurm] sbatch: expected options like"},
      {"\n[slurm]\npartition = \"gpu a\"\n", "s.toml:3: [slurm] partition: expected one word"},
      {"[slurm]\ntime = \"\"\n", "s.toml:2: [slurm] time: expected one word"},
      {"slurm = 1\n", "s.toml: slurm: expected a table [slurm]"},
      {"[slurm]\narray_limit = \"4\"\n", "s.toml:2: [slurm] array_limit: expected a whole number >= 0 (got a string)"},
      {"[slurm]\narray_limit = -1\n", "s.toml:2: [slurm] array_limit: expected a whole number from 0 to 1000000 (got -1)"},
  };
  for (const auto& [text, want] : bad) {
    try {
      merge_slurm_table(text, "s.toml", {});
      ADD_FAILURE() << text << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

TEST(SlurmConfig, CommandLineValuesAreOneWordEach) {
  SlurmOptions o;
  o.partition = "gpu";
  o.sbatch_options = {"--constraint=a100", "--exclusive"};
  EXPECT_NO_THROW(check_slurm_options(o));
  EXPECT_NO_THROW(check_slurm_options({})) << "empty fields are Slurm's defaults";
  const std::vector<std::pair<SlurmOptions, std::string>> bad = {
      {[] { SlurmOptions b; b.partition = "gpu\n"; return b; }(), "--partition 'gpu\n': expected one word"},
      {[] { SlurmOptions b; b.time_limit = "4:00 :00"; return b; }(), "--time '4:00 :00': expected one word"},
      {[] { SlurmOptions b; b.sbatch_options = {"exclusive"}; return b; }(), "--sbatch 'exclusive': expected"},
      {[] { SlurmOptions b; b.sbatch_options = {"--a\tb"}; return b; }(), "--sbatch '--a\tb': expected"},
  };
  for (const auto& [options, want] : bad) {
    try {
      check_slurm_options(options);
      ADD_FAILURE() << want << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

sched::Launch launch_on(std::vector<sched::Slot> slots, const std::string& run_dir) {
  sched::Launch l;
  l.job = 7;
  l.attempt_id = 3;
  l.attempt_number = 2;
  l.spec.argv = {"ragmig", "train", "it's.toml", "--set", "train.lr=1e-3"};
  l.spec.cwd = "/work/here";
  l.slots = std::move(slots);
  l.run_dir = run_dir;
  return l;
}

TEST(SlurmScript, ResourcesPerSlotKindAndWordsQuotedForBash) {
  testing::ScratchDir dir;
  SlurmOptions o;
  o.ragmig_exe = "/opt/ragmig/bin/ragmig";
  o.shim_exe = (dir / "shim").string();
  o.partition = "gpu";
  o.time_limit = "4:00:00";
  o.sbatch_options = {"--constraint=a100"};
  sched::Slot mig;
  mig.id = "n1:1g.18gb:0";
  mig.kind = sched::SlotKind::Mig;
  mig.profile = "1g.18gb";
  const std::string one = sbatch_script(launch_on({mig}, (dir / "run").string()), o);
  for (const std::string want : {"--gres=gpu:1g.18gb:1", "--partition=gpu", "--time=4:00:00", "--constraint=a100",
                                 "--chdir=/work/here", "--job-name=ragmig-7", "RAGMIG_JOB_ID=7 RAGMIG_ATTEMPT=2",
                                 "--signal=B:TERM@120", "trap 'trap \"\" TERM; kill -TERM 0' TERM"})
    EXPECT_NE(one.find(want), std::string::npos) << want << " missing:\n" << one;
  sched::Slot gpu = mig;
  gpu.kind = sched::SlotKind::Gpu;
  gpu.profile = "gpu";
  const std::string two = sbatch_script(launch_on({gpu, gpu}, (dir / "run").string()), o);
  for (const std::string want : {"--nodes=1 ", "--ntasks=2 ", "--gpus-per-task=1 ", "MASTER_PORT="})
    EXPECT_NE(two.find(want), std::string::npos) << want << " missing:\n" << two;
  sched::Slot other = gpu;  // a slot of a second node: the gang may spread over two
  other.id = "n2:gpu:0";
  other.group = 1;
  const std::string spread = sbatch_script(launch_on({gpu, other, gpu}, (dir / "run").string()), o);
  for (const std::string want : {"--nodes=1-2 ", "--ntasks=3 ", "RAGMIG_RANK_SLOTS='n1:1g.18gb:0 n2:gpu:0 n1:1g.18gb:0'"})
    EXPECT_NE(spread.find(want), std::string::npos) << want << " missing:\n" << spread;
  sched::Slot cpu;
  cpu.id = "n1:cpu:0";
  for (const auto& slots : {std::vector<sched::Slot>{cpu}, std::vector<sched::Slot>{cpu, cpu}})
    EXPECT_NE(sbatch_script(launch_on(slots, (dir / "run").string()), o).find("--cpus-per-task=1 "), std::string::npos);

  // Run by bash with a stand-in shim that prints what it was given: every word arrives whole, the devices are
  // Slurm's CUDA_VISIBLE_DEVICES, and a gang's one process is srun starting a task per replica.
  write_file_atomic(dir / "shim", "#!/bin/bash\nfor a in \"$@\"; do echo \"[$a]\"; done\n");
  std::filesystem::permissions(dir / "shim", std::filesystem::perms::owner_all);
  write_file_atomic(dir / "two.sh", two);
  const auto r = testing::run_process({"/usr/bin/env", "CUDA_VISIBLE_DEVICES=2,5", "/bin/bash", (dir / "two.sh").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const std::string want : {"[--devices]\n[[\"2,5\"]]", "[--slots]\n[[\"n1:1g.18gb:0,n1:1g.18gb:0\"]]",
                                 "[--lock-fd]\n[-1]", "[--]\n[srun]\n[--kill-on-bad-exit=1]\n[/bin/bash]\n[-c]",
                                 "[ragmig-rank]\n[/opt/ragmig/bin/ragmig]\n[train]\n[it's.toml]\n[--set]\n[train.lr=1e-3]"})
    EXPECT_NE(r.output.find(want), std::string::npos) << want << " not in\n" << r.output;
}

// Attempts started together go as one job array: the same options with the array's range (and cap) and no
// shared log; the array's script sends each task's output to its own run's worker.log and runs its attempt's
// script in the same shell (so the batch shell's signals reach that script's trap).
TEST(SlurmScript, AJobArrayRunsEachTasksOwnAttemptScript) {
  const std::vector<std::string> one = {"--parsable", "--job-name=ragmig-4", "--output=/r/4/worker.log", "--ntasks=1",
                                        "--cpus-per-task=1"};
  EXPECT_EQ(array_arguments(one, 3, 2), (std::vector<std::string>{"--parsable", "--job-name=ragmig-4", "--ntasks=1",
                                                                  "--cpus-per-task=1", "--output=/dev/null", "--array=0-2%2"}));
  EXPECT_EQ(array_arguments(one, 2, 0).back(), "--array=0-1");

  testing::ScratchDir dir;
  std::vector<std::string> scripts, logs;
  for (int i = 0; i < 2; ++i) {
    scripts.push_back((dir / fmt::format("task {}.sh", i)).string());  // a space: words stay whole
    logs.push_back((dir / fmt::format("log {}", i)).string());
    write_file_atomic(scripts.back(), fmt::format("echo \"task {} in pid $$, array task $SLURM_ARRAY_TASK_ID\"\n", i));
  }
  write_file_atomic(dir / "array.sh", array_script(scripts, logs));
  for (int i = 0; i < 2; ++i) {
    const auto r = testing::run_process({"/usr/bin/env", fmt::format("SLURM_ARRAY_TASK_ID={}", i), "/bin/bash", "-c",
                                         "echo \"shell $$\" >" + (dir / "shell").string() + "; exec /bin/bash " +
                                             (dir / "array.sh").string()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string shell_pid = read_file(dir / "shell").substr(6);
    EXPECT_EQ(read_file(logs[i]), fmt::format("task {} in pid {}, array task {}\n", i, shell_pid.substr(0, shell_pid.size() - 1), i));
  }
}

}  // namespace
}  // namespace ragmig::exec
