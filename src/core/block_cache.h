// A cache of big memory blocks for a process whose work repeats, such as a training loop: a freed block is kept
// for the next request of its size class instead of going back to the kernel, so a step's activations are not
// faulted in (and zeroed by the kernel) again at every step, and each block is its own mapping, so unlike one
// heap that keeps freed memory it does not fragment. Sizes are rounded up to classes, four per doubling (at
// most 25 % over the request; pages a request never touches cost address space, not memory). What it keeps is
// bounded: a request that finds no idle block of its class unmaps the longest-idle blocks of other classes
// while the mapped total would pass `slack` times the most memory ever in use at once. With slack 1 (the
// default) the process never holds more than its own peak. A looser bound buys little: on a MiniLM fine-tune
// whose batch lengths vary step by step, each class's own peaks add up to 1.5x the peak of all together, and
// slack 1.5 kept all of that (5.6 GB mapped for 3.7 GB in use, peak RSS 6.2 GB against 4.1) for 668 new
// mappings in 8 steps instead of 1,144, at the same speed.
// LibTorch's CPU tensors reach it through model/cpu_allocator.h; it knows nothing of LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ragmig {

struct BlockCacheStats {
  std::size_t in_use = 0;       ///< bytes of the blocks handed out (class sizes)
  std::size_t peak_in_use = 0;  ///< the most ever in use at once
  std::size_t mapped = 0;       ///< in use + idle
  std::size_t peak_mapped = 0;
  std::uint64_t hits = 0;    ///< requests served by an idle block
  std::uint64_t misses = 0;  ///< requests that mapped a new block
  std::uint64_t unmapped = 0;  ///< idle blocks given back (to keep within the bound, or the kernel refused a mapping)
};

class BlockCache {
 public:
  /// `slack` >= 1: the mapped total is kept at or under slack x the peak in use.
  explicit BlockCache(double slack = 1.0);
  ~BlockCache();  ///< unmaps the idle blocks; blocks still in use stay mapped
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  /// The size a request of `n` bytes (n > 0) is served with: a multiple of the page size, at most 25 % over.
  static std::size_t size_class(std::size_t n);

  /// A block of at least `n` bytes (n > 0), page-aligned. Throws std::bad_alloc when the kernel refuses the
  /// mapping even after every idle block was given back.
  void* allocate(std::size_t n);
  /// Keeps `p` for the next request of its class; false (and nothing done) when `p` is not a block of this cache.
  bool release(void* p);
  /// Unmaps every idle block.
  void trim();
  BlockCacheStats stats() const;

 private:
  struct Block {
    void* ptr;
    std::size_t size;
    std::list<Block*>::iterator idle_at;  ///< its place in idle_, while idle
  };
  // With the lock held.
  void unmap_idle(Block* b);
  void unmap_all_idle();

  const double slack_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, Block*> blocks_;                  // every mapped block by address
  std::unordered_map<std::size_t, std::vector<Block*>> free_;  // idle blocks by class, most recently freed last
  std::list<Block*> idle_;                                     // idle blocks, most recently freed first
  BlockCacheStats stats_;
};

}  // namespace ragmig
