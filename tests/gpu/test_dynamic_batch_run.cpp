// `ragmig run --policy fifo+dynbatch` on the emulated NVML driver: a resizable job that asks for more memory
// than any slice has starts at once on a 1g.18gb instance, asked (through its control.json, before it starts)
// for the largest batch that slice holds by the scheduler's memory prior; without +dynbatch it is unrunnable.
// Real processes throughout: `ragmig submit`, `ragmig run`, the workers.
#include <gmock/gmock.h>

#include "core/atomic_file.h"
#include "gpu/emulated_gpu_fixture.h"
#include "sched/memory_model.h"

namespace ragmig::testing {
namespace {

using ::testing::HasSubstr;
using DynamicBatchRun = EmulatedGpuScheduler;

// A job file: 30 GB at batch 64, resizable to 16; the worker records what it was asked for.
std::string resizable_job(const std::filesystem::path& dir, const std::string& name) {
  const auto path = dir / (name + ".toml");
  write_file_atomic(path, "[job]\nname = \"" + name + "\"\nslots = \"30gb:1\"\nbatch_size = 64\nmin_batch_size = 16\n"
                          "cmd = \"sh -c 'cat $RAGMIG_RUN_DIR/control.json > $RAGMIG_RUN_DIR/asked.json'\"\n");
  return path.string();
}

TEST_F(DynamicBatchRun, AJobTooBigForEverySliceStartsSmallerNow) {
  write_gpus(seven_small_instances());
  const int64_t a = submit({resizable_job(dir_.path(), "a")});
  const int64_t b = submit({resizable_job(dir_.path(), "b")});

  // Without dynamic batch: 30 GB fits none of the seven 1g.18gb instances.
  const auto plain = ragmig({"run", "--until-empty", "--tick", "0.2"});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(job(a)["state"], "queued");
  EXPECT_THAT(job(a)["reason"].get<std::string>(), HasSubstr("unrunnable")) << plain.output;

  const auto run = ragmig({"run", "--until-empty", "--tick", "0.2", "--policy", "fifo+dynbatch"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // The prior: a quarter of 30 GB fixed (7,680 MiB), 360 MiB per sample; 18,432 MiB hold 29.
  const sched::MemoryModel prior = sched::prior_memory(sched::parse_need("30gb"), 64);
  const int64_t expected = sched::largest_batch_within(prior, 18 * 1024, 16, 64, 1);
  ASSERT_EQ(expected, 29);
  for (const int64_t id : {a, b}) {
    EXPECT_EQ(job(id)["state"], "done") << run.output;
    const auto asked = json::parse(read_file(std::filesystem::path(job(id)["run_dir"].get<std::string>()) / "asked.json"));
    EXPECT_EQ(asked["batch_size"], expected);
  }
  EXPECT_THAT(run.output, HasSubstr("queued -> running"));
}

}  // namespace
}  // namespace ragmig::testing
