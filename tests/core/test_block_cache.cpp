// core/block_cache.h: size classes, reuse of freed blocks, and the bound on what it keeps, on real mappings.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "core/block_cache.h"

namespace ragmig {
namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;

TEST(BlockCache, SizeClassesArePagesAtMostAQuarterOverTheRequest) {
  std::size_t previous = 0;
  for (std::size_t n = 1; n < 300 * MiB; n = n * 9 / 8 + 1) {
    const std::size_t c = BlockCache::size_class(n);
    EXPECT_GE(c, n);
    EXPECT_EQ(c % 4096, 0u) << n;
    if (n >= 16 * KiB) {
      EXPECT_LE(c, n + n / 4) << n;
    }
    EXPECT_GE(c, previous) << "classes grow with the request";
    EXPECT_EQ(BlockCache::size_class(c), c) << "a class is its own class";
    previous = c;
  }
  EXPECT_EQ(BlockCache::size_class(1), 4096u);
  EXPECT_EQ(BlockCache::size_class(100 * MiB), 112 * MiB);  // steps of 16 MiB between 64 and 128 MiB
  EXPECT_EQ(BlockCache::size_class(64 * MiB + 1), 80 * MiB);
}

TEST(BlockCache, AFreedBlockServesTheNextRequestOfItsClass) {
  BlockCache cache;
  void* a = cache.allocate(3 * MiB);
  std::memset(a, 1, 3 * MiB);  // writable
  ASSERT_TRUE(cache.release(a));
  EXPECT_EQ(cache.allocate(3 * MiB - 100), a) << "same class: the idle block, not a new mapping";
  void* b = cache.allocate(10 * MiB);
  EXPECT_NE(b, a);
  auto s = cache.stats();
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.in_use, 3 * MiB + 10 * MiB);
  EXPECT_EQ(s.mapped, s.in_use);
  cache.release(a);
  cache.release(b);
  s = cache.stats();
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.mapped, 13 * MiB) << "kept for the next step";
  EXPECT_EQ(s.peak_in_use, 13 * MiB);
  cache.trim();
  EXPECT_EQ(cache.stats().mapped, 0u);
}

TEST(BlockCache, APointerItDidNotHandOutIsNotItsToRelease) {
  BlockCache cache;
  int on_stack = 0;
  EXPECT_FALSE(cache.release(&on_stack));
  std::vector<char> heap(1 * MiB);
  EXPECT_FALSE(cache.release(heap.data()));
  void* a = cache.allocate(1 * MiB);
  EXPECT_FALSE(cache.release(static_cast<char*>(a) + 4096)) << "only the block's own address";
  EXPECT_TRUE(cache.release(a));
}

// A training loop whose batch lengths vary: each step allocates 12 buffers whose sizes follow the step's length,
// frees them in reverse, and the next step has another length.
BlockCacheStats run_steps_of_varying_length(BlockCache& cache) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> length(16, 256);
  for (int step = 0; step < 300; ++step) {
    const std::size_t t = length(rng);
    std::vector<void*> live;
    for (std::size_t i = 1; i <= 12; ++i) {
      const std::size_t n = t * i * 64 * KiB;
      live.push_back(cache.allocate(n));
      static_cast<char*>(live.back())[n - 1] = 1;
    }
    while (!live.empty()) {
      EXPECT_TRUE(cache.release(live.back()));
      live.pop_back();
    }
  }
  return cache.stats();
}

TEST(BlockCache, ShapesThatChangeEveryStepStayWithinTheBound) {
  // Without the bound every class ever seen would stay mapped.
  for (const double slack : {1.0, 1.5}) {
    SCOPED_TRACE(slack);
    BlockCache cache(slack);
    const auto s = run_steps_of_varying_length(cache);
    EXPECT_LE(static_cast<double>(s.peak_mapped), slack * static_cast<double>(s.peak_in_use));
    EXPECT_GT(s.unmapped, 0u) << "the bound had to give blocks back";
    EXPECT_GT(s.hits, 0u) << "and steps of similar lengths still reused blocks";
  }
  BlockCache strict, loose(1.5);
  EXPECT_GT(run_steps_of_varying_length(strict).misses, run_steps_of_varying_length(loose).misses)
      << "a looser bound keeps more for later";
}

TEST(BlockCache, ARepeatingStepMapsItsBlocksOnce) {
  BlockCache cache;
  for (int step = 0; step < 20; ++step) {
    std::vector<void*> live;
    for (std::size_t i = 1; i <= 8; ++i) live.push_back(cache.allocate(i * 3 * MiB));
    for (void* p : live) cache.release(p);
  }
  const auto s = cache.stats();
  EXPECT_EQ(s.misses, 8u);
  EXPECT_EQ(s.hits, 19u * 8u);
  EXPECT_EQ(s.unmapped, 0u);
  EXPECT_EQ(s.peak_mapped, s.peak_in_use);
}

TEST(BlockCache, ThreadsShareIt) {
  BlockCache cache;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 500; ++i) {
        const std::size_t n = (1 + (i + t) % 5) * 256 * KiB;
        auto* p = static_cast<unsigned char*>(cache.allocate(n));
        std::memset(p, t, n);
        for (std::size_t k = 0; k < n; k += 4096) ASSERT_EQ(p[k], t) << "a block handed to two threads at once";
        ASSERT_TRUE(cache.release(p));
      }
    });
  for (auto& th : threads) th.join();
  const auto s = cache.stats();
  EXPECT_EQ(s.in_use, 0u);
  EXPECT_EQ(s.hits + s.misses, 2000u);
}

}  // namespace
}  // namespace ragmig
