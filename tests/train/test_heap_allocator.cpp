// What serves ragmig-torch's memory, seen from outside in a real run's start event: LibTorch's CPU tensors from
// the block cache (model/cpu_allocator.h) unless RAGMIG_CPU_BLOCK_CACHE=0, the rest from jemalloc with its purging
// off where the build linked it (heap_reuse.cpp's malloc_conf reached it), else from glibc, set to reuse its heap
// when the cache is off; the user's own allocator settings win over ragmig's in either case.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>

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

std::string with_env(const char* name, const char* value, const std::function<std::string()>& f) {
  ::setenv(name, value, 1);
  std::string r = f();
  ::unsetenv(name);
  return r;
}

TEST(HeapAllocator, TheStartEventNamesItAndTheUsersSettingWins) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  using ::testing::MatchesRegex;
  const auto run = [&](const std::string& name) { return [&dir, name] { return allocator_of_run(dir.path(), name); }; };
#ifdef RAGMIG_WITH_JEMALLOC
  const std::string jemalloc = "jemalloc [0-9.]+ \\(dirty_decay_ms -1, muzzy_decay_ms -1\\)";
  EXPECT_THAT(run("default")(), MatchesRegex("block cache \\(>= 64 KiB\\), " + jemalloc))
      << "ragmig-torch was linked with jemalloc: its malloc_conf should have turned purging off";
  EXPECT_THAT(with_env("RAGMIG_CPU_BLOCK_CACHE", "0", run("no-cache")), MatchesRegex(jemalloc));
  EXPECT_THAT(with_env("MALLOC_CONF", "dirty_decay_ms:2000", run("user")),
              MatchesRegex("block cache \\(>= 64 KiB\\), jemalloc [0-9.]+ "
                           "\\(dirty_decay_ms 2000, muzzy_decay_ms -1\\)"));
#else
  EXPECT_EQ(run("default")(), "block cache (>= 64 KiB), glibc");
  EXPECT_EQ(with_env("RAGMIG_CPU_BLOCK_CACHE", "0", run("no-cache")), "glibc, heap reuse")
      << "without the cache glibc keeps freed memory in its heap";
  EXPECT_EQ(with_env("GLIBC_TUNABLES", "glibc.malloc.mmap_max=65536", run("user")),
            "block cache (>= 64 KiB), glibc (GLIBC_TUNABLES)");
#endif
}

}  // namespace
}  // namespace ragmig::testing
