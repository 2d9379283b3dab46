// `ragmig run --mig auto` on the emulated NVML driver (nvml_emulator.cpp): the scheduler re-partitions a
// MIG GPU between passes for the queued jobs, never touching an instance a running job holds, and the
// workers run on the new instances (CUDA_VISIBLE_DEVICES = their MIG UUIDs). Real processes throughout:
// `ragmig submit`, `ragmig run`, workers, signals.
#include <gmock/gmock.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "core/atomic_file.h"
#include "gpu/emulated_gpu_fixture.h"
#include "train/train_fixture.h"

namespace ragmig::testing {
namespace {

using ::testing::HasSubstr;
using MigAutoRun = EmulatedGpuScheduler;

constexpr const char* kRecordDevice = "echo $CUDA_VISIBLE_DEVICES > $RAGMIG_RUN_DIR/dev.txt";

TEST_F(MigAutoRun, RepartitionsIdleInstancesForTheQueueAndKeepsBusyOnes) {
  write_gpus(seven_small_instances());
  const int64_t small =
      submit({"--slots", "1g.18gb:1", "--cmd", std::string("sh -c '") + kRecordDevice + "; sleep 3'"});
  const int64_t large = submit({"--slots", "3g.71gb:1", "--cmd", std::string("sh -c '") + kRecordDevice + "'"});
  const auto run = ragmig({"run", "--until-empty", "--mig", "auto", "--tick", "0.2"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(job(small)["state"], "done") << run.output;
  EXPECT_EQ(job(large)["state"], "done") << run.output;

  // The small job ran on one of the 1g.18gb instances, which is still there: its instance was never touched.
  const auto [small_gi, small_profile] = instance_of(device_of(small));
  EXPECT_EQ(small_profile, 19) << device_of(small);
  // The large job ran on a 3g.71gb instance that the scheduler created for it.
  const auto [large_gi, large_profile] = instance_of(device_of(large));
  EXPECT_EQ(large_profile, 9) << device_of(large) << "\n" << gpus().dump(2);
  const auto calls = gpus()["calls"].get<std::vector<std::string>>();
  int destroyed = 0;
  for (const auto& c : calls) {
    const std::string mine = " gi=" + std::to_string(small_gi);
    EXPECT_FALSE(c.find(mine + " ") != std::string::npos || c.ends_with(mine)) << c;
    destroyed += c.rfind("destroy_gi", 0) == 0;
  }
  // A 3g.71gb takes four memory slices, 0..3 or 4..7: the three 1g.18gb at 4, 5, 6 go (the small job
  // holds one of 0..3), four 1g.18gb and the 3g.71gb remain.
  EXPECT_EQ(destroyed, 3) << run.output;
  EXPECT_EQ(gpus()["gpus"][0]["instances"].size(), 5u);
  EXPECT_THAT(run.output, HasSubstr("mig auto: GPU 0 (H200-141GB): nvidia-smi mig -i 0 -cgi 9:"));
  EXPECT_THAT(run.output, HasSubstr("layout is now"));
}

TEST_F(MigAutoRun, AnEmptyMigGpuIsPartitionedFromScratch) {
  json state = seven_small_instances();
  state["gpus"][0]["instances"] = json::array();
  write_gpus(state);
  // The second is short, so that sharing beats waiting for the first to end (see MigrateMovesALoneJob...).
  std::vector<int64_t> ids;
  for (const char* estimate : {"3600", "60"})
    ids.push_back(submit({"--slots", "2g.35gb:1", "--estimate", estimate, "--cmd",
                          std::string("sh -c '") + kRecordDevice + "'"}));
  const auto run = ragmig({"run", "--until-empty", "--mig", "auto", "--tick", "0.2"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // Each asks for at least a 2g.35gb; between them they get the whole GPU, a 4g.71gb and a 3g.71gb (more
  // compute than two 2g.35gb, which would leave three slices idle), side by side.
  std::set<std::string> devices;
  std::set<int> profiles;
  for (const int64_t id : ids) {
    EXPECT_EQ(job(id)["state"], "done");
    profiles.insert(instance_of(device_of(id)).second);
    devices.insert(device_of(id));
  }
  EXPECT_EQ(devices.size(), 2u);
  EXPECT_EQ(profiles, (std::set<int>{5, 9})) << run.output;  // 4g.71gb, 3g.71gb
}

TEST_F(MigAutoRun, MigrateMovesALoneJobToTheWholeGpu) {
  // Two jobs on an empty H200 share it (4g + 3g); when the short one ends, the long one is alone on a slice:
  // `--mig migrate` checkpoints it (SIGTERM -> exit 75), re-cuts the GPU to one 7g and resumes it there. The
  // long one comes first: the short one then shares rather than wait an hour for the whole GPU (queued the
  // other way round, the long one would wait the second the short one needs, and nothing would share).
  json state = seven_small_instances();
  state["gpus"][0]["instances"] = json::array();
  write_gpus(state);
  const int64_t long_job =
      submit({"--slots", "10gb:1", "--estimate", "3600", "--cmd",
              "sh -c 'trap \"exit 75\" TERM; echo $CUDA_VISIBLE_DEVICES >> $RAGMIG_RUN_DIR/dev.txt; "
              "if [ $(wc -l < $RAGMIG_RUN_DIR/dev.txt) -gt 1 ]; then exit 0; fi; sleep 20 & wait'"});
  const int64_t short_job = submit({"--slots", "10gb:1", "--estimate", "1", "--cmd", "sh -c 'sleep 0.5'"});
  const auto run = ragmig({"run", "--until-empty", "--mig", "migrate", "--tick", "0.2"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(job(short_job)["state"], "done");
  const auto j = job(long_job);
  EXPECT_EQ(j["state"], "done") << run.output;
  ASSERT_EQ(j["attempt_list"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["attempt_list"][0]["exit_code"], 75);
  EXPECT_LT(j["attempt_list"][0]["ended_at"].get<double>() - j["attempt_list"][0]["started_at"].get<double>(), 15)
      << "moved, not waited for";
  const std::string run_dir = j["run_dir"];
  const std::string devices = read_file(std::filesystem::path(run_dir) / "dev.txt");
  const auto newline = devices.find('\n');
  ASSERT_NE(newline, std::string::npos);
  const std::string first = devices.substr(0, newline), second = devices.substr(newline + 1, devices.size() - newline - 2);
  EXPECT_NE(first, second);
  EXPECT_EQ(instance_of(second).second, 0) << gpus().dump(2);  // 7g.141gb
  EXPECT_THAT(run.output, HasSubstr("moving 1 running job(s) to a better layout"));
}

// The same move with a real `ragmig train` and slow MIG steps (as a real driver's): the trainer checkpoints on
// SIGTERM, exits 75, and resumes on the whole GPU from that checkpoint; every step is trained exactly once.
TEST_F(MigAutoRun, MigrateMovesARealTrainingJobAndLosesNoStep) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  write_squad_pairs(dir_ / "pairs.jsonl", 200);
  write_file_atomic(dir_ / "train.toml", tiny_config(dir_ / "pairs.jsonl"));
  json state = seven_small_instances();
  state["gpus"][0]["instances"] = json::array();
  write_gpus(state);
  constexpr int64_t kSteps = 300;  // ~11 s on a free core
  const int64_t trainer = submit(
      {"--slots", "10gb:1", "--estimate", "3600", "--name", "trainer", "--cmd",
       fmt::format("sh -c 'echo $CUDA_VISIBLE_DEVICES >> $RAGMIG_RUN_DIR/dev.txt; exec {} train {} --quiet --set "
                   "train.max_steps={}'",
                   RAGMIG_BINARY, (dir_ / "train.toml").string(), kSteps)});
  const std::string run_dir = job(trainer)["run_dir"];
  // The short job ends once the trainer has written its first checkpoint event ("event":"checkpoint"; the
  // start event's config names checkpoint_every): the move comes mid-training.
  const int64_t short_job = submit(
      {"--slots", "10gb:1", "--estimate", "1", "--cmd",
       fmt::format("sh -c 'until grep -q event...checkpoint {}/events.jsonl 2>/dev/null; do sleep 0.1; done'", run_dir)});
  ::setenv("NVML_EMULATOR_CHANGE_MS", "200", 1);
  const auto run = ragmig({"run", "--until-empty", "--mig", "migrate", "--tick", "0.2"});
  ::unsetenv("NVML_EMULATOR_CHANGE_MS");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(job(short_job)["state"], "done");
  const auto j = job(trainer);
  ASSERT_EQ(j["state"], "done") << run.output;
  ASSERT_EQ(j["attempt_list"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["attempt_list"][0]["exit_code"], 75);
  EXPECT_THAT(run.output, HasSubstr("moving 1 running job(s) to a better layout"));
  const std::string devices = read_file(std::filesystem::path(run_dir) / "dev.txt");
  const auto newline = devices.find('\n');
  ASSERT_NE(newline, std::string::npos) << devices;
  EXPECT_EQ(instance_of(devices.substr(newline + 1, devices.size() - newline - 2)).second, 0) << gpus().dump(2);

  auto t = trained_steps(run_dir);
  ASSERT_EQ(t.starts.size(), 2u) << read_file(std::filesystem::path(run_dir) / "events.jsonl");
  EXPECT_EQ(t.starts[0], 0);
  EXPECT_EQ(t.starts[1], t.checkpoint_before[1]) << "resumed from its last checkpoint";
  EXPECT_GE(t.starts[1], 9) << "moved after its first checkpoint";
  for (int64_t step = 1; step <= kSteps; ++step) EXPECT_EQ(t.trained[step], 1) << "step " << step;
}

TEST_F(MigAutoRun, RefusedWithoutAGpuItMayPartition) {
  ::setenv("RAGMIG_NVML_LIBRARY", "/no/such/libnvidia-ml.so.1", 1);
  auto r = ragmig({"run", "--until-empty", "--mig", "auto"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--mig auto needs NVML"));
  ::setenv("RAGMIG_NVML_LIBRARY", NVML_EMULATOR, 1);
  ::unsetenv("CUDA_VISIBLE_DEVICES");  // it would hide the emulator's GPU
  json state = seven_small_instances();
  state["gpus"][0]["mig_current"] = 0;
  state["gpus"][0]["instances"] = json::array();
  write_gpus(state);
  r = ragmig({"run", "--until-empty", "--mig", "auto"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("MIG mode is off"));
  EXPECT_TRUE(gpus()["calls"].empty());
}

TEST_F(MigAutoRun, WithoutPermissionTheJobWaitsAndTheSchedulerSaysWhyOnce) {
  json state = seven_small_instances();
  state["gpus"][0]["faults"] = {{"no_permission", true}};
  write_gpus(state);
  const int64_t large = submit({"--slots", "3g.71gb:1", "--cmd", "true"});
  auto scheduler = start_scheduler({"--mig", "auto", "--tick", "0.1"}, "noperm");
  const std::string log = (dir_ / "scheduler-noperm.log").string();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline &&
         (!std::filesystem::exists(log) || read_file(log).find("needs root") == std::string::npos)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // ten more passes: the same question is not asked again
  scheduler->signal(SIGTERM);
  EXPECT_EQ(scheduler->wait(), 0);
  const std::string text = read_file(log);
  EXPECT_THAT(text, HasSubstr("the layout stays as it is"));
  size_t said = 0;
  for (size_t at = text.find("needs root"); at != std::string::npos; at = text.find("needs root", at + 1)) ++said;
  EXPECT_EQ(said, 1u) << text;
  EXPECT_EQ(job(large)["state"], "queued");
  EXPECT_EQ(gpus()["gpus"][0]["instances"].size(), 7u);
}

// Someone destroys, outside ragmig, the instance a running job holds; then the queue asks for a re-partition.
// The scheduler keeps the job's slot until the job ends instead of losing track of it (or dying), and the
// other job runs on what the partitioner made.
TEST_F(MigAutoRun, ARunningJobsInstanceDestroyedElsewhereDoesNotBreakTheScheduler) {
  write_gpus(seven_small_instances());
  const int64_t small =
      submit({"--slots", "1g.18gb:1", "--cmd", std::string("sh -c '") + kRecordDevice + "; sleep 10'"});
  auto scheduler = start_scheduler({"--mig", "auto", "--tick", "0.1", "--until-empty"}, "vanished");
  ASSERT_TRUE(wait_for([&](const json& s) { return state_of(s, small) == "running"; }, 60));
  std::string device;
  for (int i = 0; i < 600 && device.empty(); ++i) {
    const std::string run_dir = job(small)["run_dir"];
    if (std::filesystem::exists(std::filesystem::path(run_dir) / "dev.txt")) device = device_of(small);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int gi = instance_of(device).first;
  ASSERT_GT(gi, 0) << device;
  json state = gpus();
  auto& list = state["gpus"][0]["instances"];
  for (size_t k = 0; k < list.size(); ++k) {
    if (list[k]["gi"] == gi) {
      list.erase(k);
      break;
    }
  }
  write_gpus(state);
  const int64_t large = submit({"--slots", "3g.71gb:1", "--cmd", "true"});
  EXPECT_EQ(scheduler->wait(), 0);
  const std::string log = read_file((dir_ / "scheduler-vanished.log").string());
  EXPECT_THAT(log, HasSubstr("of running job " + std::to_string(small) + " is gone from NVML's list")) << log;
  EXPECT_EQ(job(small)["state"], "done") << log;
  EXPECT_EQ(job(large)["state"], "done") << log;
}

}  // namespace
}  // namespace ragmig::testing
