// The block cache as LibTorch's CPU allocator (see cpu_allocator.h).
#include "model/cpu_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <cstdlib>
#include <new>
#include <string>

#include "core/heap_reuse.h"
#include "model/onednn_cache.h"

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define RAGMIG_CPU_BLOCK_CACHE 1
#endif

namespace ragmig::model {
namespace {

constexpr std::size_t kMinBlock = 64 * 1024;  // below it glibc's heap serves (its mmap threshold starts at 128 KiB)

// Never destroyed: tensors may be freed during static destruction, after any destructor of ours ran.
BlockCache* the_cache = nullptr;

#ifdef RAGMIG_CPU_BLOCK_CACHE
c10::DeleterFnPtr small_deleter = nullptr;  // LibTorch's allocator's, for what the cache does not own

void release(void* p) {
  if (!the_cache->release(p)) small_deleter(p);
}

class BlockCacheAllocator final : public c10::Allocator {
 public:
  explicit BlockCacheAllocator(c10::Allocator* small) : small_(small) {}

  c10::DataPtr allocate(size_t n) override {
    if (n < kMinBlock) return small_->allocate(n);
    void* p = nullptr;
    try {
      p = the_cache->allocate(n);
    } catch (const std::bad_alloc&) {
      const BlockCacheStats s = the_cache->stats();
      TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU block cache: can't allocate memory: you tried to allocate ", n,
                       " bytes with ", s.in_use, " bytes in use (", s.mapped, " mapped)");
    }
    return {p, p, &release, c10::Device(c10::DeviceType::CPU)};
  }

  // Raw allocations of either size come back here.
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

 private:
  c10::Allocator* small_;
};
#endif

bool turned_off() {
  const char* v = std::getenv("RAGMIG_CPU_BLOCK_CACHE");
  return v && std::string(v) == "0";
}

}  // namespace

bool install_cpu_block_cache() {
#ifdef RAGMIG_CPU_BLOCK_CACHE
  static const bool installed = [] {
    if (turned_off()) return false;
    c10::Allocator* small = c10::GetDefaultCPUAllocator();
    small_deleter = small->raw_deleter();
    the_cache = new BlockCache();
    // Priority above the default's 0, so that nothing later puts LibTorch's own back by accident.
    c10::SetCPUAllocator(new BlockCacheAllocator(small), /*priority=*/1);
    return true;
  }();
  return installed;
#else
  return false;
#endif
}

void set_up_cpu_memory() {
  if (!install_cpu_block_cache()) reuse_freed_heap_memory();
  cap_onednn_caches();
}

std::optional<BlockCacheStats> cpu_block_cache_stats() {
  if (!the_cache) return std::nullopt;
  return the_cache->stats();
}

std::string cpu_allocator_name() {
  if (!the_cache) return heap_allocator();
  return "block cache (>= 64 KiB), " + heap_allocator();
}

}  // namespace ragmig::model
