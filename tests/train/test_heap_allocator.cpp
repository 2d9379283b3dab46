// What serves ragmig-torch's memory, seen from outside in a real run's start event: LibTorch's CPU tensors from
// the block cache (model/cpu_allocator.h) unless RAGMIG_CPU_BLOCK_CACHE=0, the rest from jemalloc with its purging
// off where the build linked it (heap_reuse.cpp's malloc_conf reached it), else from glibc, set to reuse its heap
// when the cache is off; the user's own allocator settings win over ragmig's in either case. oneDNN's and ideep's
// caches are capped (model/onednn_cache.h), unless the user set their sizes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/atomic_file.h"
#include "support/sanitizers.h"
#include "train_fixture.h"

namespace ragmig::testing {
namespace {

nlohmann::json start_of_run(const std::filesystem::path& dir, const std::string& name) {
  const auto run = dir / name;
  auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", run.string(), "--quiet", "--set",
                       "train.max_steps=1", "--set", "train.device=cpu"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return start_event(run);
}

std::string allocator_of_run(const std::filesystem::path& dir, const std::string& name) {
  return start_of_run(dir, name).value("allocator", "(none)");
}

template <typename F>
auto with_env(const char* name, const char* value, const F& f) {
  ::setenv(name, value, 1);
  auto r = f();
  ::unsetenv(name);
  return r;
}

TEST(HeapAllocator, TheStartEventNamesItAndTheUsersSettingWins) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  RAGMIG_SKIP_UNDER_SANITIZER("its malloc replaces glibc's, whose heap settings this test reads back");
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

TEST(HeapAllocator, OneDnnCachesAreCappedUnlessTheUserSizedThem) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  for (const char* name : {"ONEDNN_PRIMITIVE_CACHE_CAPACITY", "DNNL_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY"})
    ::unsetenv(name);
  const auto caches = [&](const std::string& name) {
    return [&dir, name] { return start_of_run(dir.path(), name).value("onednn_caches", nlohmann::json()); };
  };
  EXPECT_EQ(caches("default")(), (nlohmann::json{{"primitives", 128}, {"ideep", 128}}));
  EXPECT_EQ(with_env("LRU_CACHE_CAPACITY", "512", caches("user")),
            (nlohmann::json{{"primitives", 128}, {"ideep", 512}}));
}

}  // namespace
}  // namespace ragmig::testing
