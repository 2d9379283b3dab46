// model/cpu_allocator.h: LibTorch's CPU tensors of 64 KiB and more come from the block cache, smaller ones from
// LibTorch's own allocator, and both kinds are freed by whoever made them, raw allocations included.
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "model/cpu_allocator.h"
#include "model/keyed_dropout.h"
#include "model/onednn_cache.h"

namespace ragmig::model {
namespace {

TEST(CpuAllocator, BigTensorsComeFromTheCacheAndGoBackToIt) {
  if (const char* off = std::getenv("RAGMIG_CPU_BLOCK_CACHE"); off && std::string(off) == "0")
    GTEST_SKIP() << "RAGMIG_CPU_BLOCK_CACHE=0";
  ASSERT_TRUE(install_cpu_block_cache());
  EXPECT_TRUE(install_cpu_block_cache()) << "once per process, then a no-op";
  EXPECT_EQ(cpu_allocator_name().rfind("block cache (>= 64 KiB), ", 0), 0u) << cpu_allocator_name();
  const auto before = *cpu_block_cache_stats();
  void* first = nullptr;
  {
    auto big = torch::ones({1000, 1000});  // 4 MB
    first = big.data_ptr();
    auto small = torch::ones({100, 100});  // 40 KB: LibTorch's allocator
    const auto during = *cpu_block_cache_stats();
    EXPECT_EQ(during.in_use - before.in_use, BlockCache::size_class(4'000'000));
    EXPECT_EQ(big.sum().item<float>(), 1e6f);
    EXPECT_EQ(small.sum().item<float>(), 1e4f);
  }
  EXPECT_EQ(cpu_block_cache_stats()->in_use, before.in_use);
  auto again = torch::zeros({999, 1001});  // the same class: the same block, zeroed by the op
  EXPECT_EQ(again.data_ptr(), first);
  EXPECT_EQ(again.abs().sum().item<float>(), 0.f);

  // Raw allocations (kernels' scratch space) of both sizes come back through raw_deleter.
  c10::Allocator* a = c10::GetCPUAllocator();
  void* raw_big = a->raw_allocate(1 << 20);
  void* raw_small = a->raw_allocate(100);
  EXPECT_GT(cpu_block_cache_stats()->in_use, before.in_use);
  a->raw_deallocate(raw_small);
  a->raw_deallocate(raw_big);
  EXPECT_EQ(cpu_block_cache_stats()->in_use, before.in_use + BlockCache::size_class(999 * 1001 * 4));
}

TEST(CpuAllocator, ATrainingStepGivesTheSameNumbersWithTheCache) {
  // The same little regression from the same seed, before and after the cache serves the tensors: the cache
  // hands out memory that earlier tensors wrote, which LibTorch's ops must (and do) overwrite. On one thread: with
  // two, a CI-like load (two busy loops beside it) gave other bits in 3 of 40 runs, cache or not (the BLAS may
  // split its work by what it finds free).
  struct OneThread {
    int before = at::get_num_threads();
    OneThread() { at::set_num_threads(1); }
    ~OneThread() { at::set_num_threads(before); }
  } one_thread;
  const auto run = [] {
    torch::manual_seed(3);
    auto w = torch::randn({256, 512}, torch::requires_grad());
    auto x = torch::randn({128, 256});
    torch::optim::AdamW opt({w}, torch::optim::AdamWOptions(1e-2));
    for (int i = 0; i < 5; ++i) {
      opt.zero_grad();
      auto loss = torch::gelu(x.matmul(w)).pow(2).mean();
      loss.backward();
      opt.step();
    }
    return w.detach().clone();
  };
  const auto plain = run();
  if (!install_cpu_block_cache()) GTEST_SKIP() << "the cache is off or unavailable here";
  const auto before = *cpu_block_cache_stats();
  const auto cached = run();
  EXPECT_GT(cpu_block_cache_stats()->hits, before.hits) << "the steps reused blocks";
  EXPECT_TRUE(torch::equal(plain, cached));
}

// What a graph holds between forward and backward, counted by the cache: attention's dropout and product
// (model/keyed_dropout.h) keep the probabilities once and the mask as bits, where autograd's dropout and matmul
// keep the mask and the dropped copy beside them; a hidden dropout keeps its mask as bits too.
TEST(CpuAllocator, DropoutGraphsKeepBitsNotMasks) {
  if (!install_cpu_block_cache()) GTEST_SKIP() << "the cache is off or unavailable here";
  const torch::Tensor logits = torch::randn({8, 4, 128, 128}).requires_grad_(true);  // 2 MiB
  const torch::Tensor v = torch::randn({8, 4, 128, 32}).requires_grad_(true);
  const torch::Tensor h = torch::randn({8, 128, 256}).requires_grad_(true);  // 1 MiB
  const std::size_t probs = BlockCache::size_class(logits.nbytes()), hidden = BlockCache::size_class(h.nbytes());
  const auto held = [](const std::function<torch::Tensor()>& forward) {
    const std::size_t before = cpu_block_cache_stats()->in_use;
    const torch::Tensor out = forward();
    const std::size_t during = cpu_block_cache_stats()->in_use - before;
    out.sum().backward();  // the graph is usable
    return during;
  };
  const std::size_t ours = held([&] { return keyed_dropout_matmul(torch::softmax(logits, -1), v, 0.1, true); });
  const std::size_t plain = held([&] {
    const torch::Tensor p = torch::softmax(logits, -1);
    return torch::matmul(p * keyed_dropout_mask_like(p, 0.1, keyed_dropout_key()), v);
  });
  const std::size_t bits = BlockCache::size_class(logits.numel() / 8);  // 64 KiB: from the cache too
  EXPECT_EQ(plain - ours, 2 * probs - bits) << "mask and dropped copy, for the mask's bits";
  EXPECT_EQ(ours, probs + bits + BlockCache::size_class(v.nbytes())) << "probabilities, bits and the output";
  EXPECT_EQ(held([&] { return keyed_dropout(h, 0.1, true); }), hidden) << "the output (bits: 32 KiB, not cached)";
  EXPECT_EQ(held([&] { return h * keyed_dropout_mask_like(h, 0.1, keyed_dropout_key()); }), 2 * hidden);
}

// model/onednn_cache.h: ragmig's caps unless the user set them, under either of oneDNN's names.
TEST(OneDnnCaches, CappedUnlessTheEnvironmentSaysOtherwise) {
  const auto clear = [] {
    for (const char* name : {"ONEDNN_PRIMITIVE_CACHE_CAPACITY", "DNNL_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY"})
      unsetenv(name);
  };
  clear();
  EXPECT_EQ(onednn_cache_capacities().primitives, 1024) << "oneDNN's default";
  EXPECT_EQ(onednn_cache_capacities().ideep, 1024) << "ideep's default";
  cap_onednn_caches();
  EXPECT_STREQ(std::getenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY"), "128");
  EXPECT_STREQ(std::getenv("LRU_CACHE_CAPACITY"), "128");
  EXPECT_EQ(onednn_cache_capacities().primitives, kOneDnnCacheCapacity);
  EXPECT_EQ(onednn_cache_capacities().ideep, kOneDnnCacheCapacity);

  clear();
  setenv("DNNL_PRIMITIVE_CACHE_CAPACITY", "7", 1);
  setenv("LRU_CACHE_CAPACITY", "9", 1);
  cap_onednn_caches();
  EXPECT_EQ(std::getenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY"), nullptr) << "the older name counts as set";
  EXPECT_EQ(onednn_cache_capacities().primitives, 7);
  EXPECT_EQ(onednn_cache_capacities().ideep, 9) << "the user's value stays";
  setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0", 1);
  EXPECT_EQ(onednn_cache_capacities().primitives, 0) << "the newer name wins; 0 turns the cache off";
  setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "lots", 1);
  EXPECT_EQ(onednn_cache_capacities().primitives, 0) << "read with atoi, as oneDNN reads it";
  clear();
}

}  // namespace
}  // namespace ragmig::model
