// What serves ragmig-torch's memory (core/heap_reuse.h), seen from outside in a real run's start event: where
// the build linked jemalloc, jemalloc with its purging off (heap_reuse.cpp's malloc_conf reached it), else glibc
// set to reuse its heap; and the user's own allocator settings win over ragmig's in either case.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/atomic_file.h"
#include "train_fixture.h"

namespace ragmig::testing {
namespace {

std::string allocator_of_run(const std::filesystem::path& dir, const std::string& name) {
  const auto run = dir / name;
  auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", run.string(), "--quiet", "--set",
                       "train.max_steps=1", "--set", "train.device=cpu"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return start_event(run).value("allocator", "(none)");
}

TEST(HeapAllocator, TheStartEventNamesItAndTheUsersSettingWins) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
#ifdef RAGMIG_WITH_JEMALLOC
  using ::testing::MatchesRegex;
  EXPECT_THAT(allocator_of_run(dir.path(), "default"), MatchesRegex("jemalloc [0-9.]+ \\(dirty_decay_ms -1, muzzy_decay_ms -1\\)"))
      << "ragmig-torch was linked with jemalloc: its malloc_conf should have turned purging off";
  ::setenv("MALLOC_CONF", "dirty_decay_ms:2000", 1);
  const auto set = allocator_of_run(dir.path(), "user");
  ::unsetenv("MALLOC_CONF");
  EXPECT_THAT(set, MatchesRegex("jemalloc [0-9.]+ \\(dirty_decay_ms 2000, muzzy_decay_ms -1\\)"));
#else
  EXPECT_EQ(allocator_of_run(dir.path(), "default"), "glibc, heap reuse");
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_max=65536", 1);
  const auto set = allocator_of_run(dir.path(), "user");
  ::unsetenv("GLIBC_TUNABLES");
  EXPECT_EQ(set, "glibc (GLIBC_TUNABLES)");
#endif
}

}  // namespace
}  // namespace ragmig::testing
