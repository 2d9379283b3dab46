// A cache of big memory blocks for a process whose work repeats, such as a training loop: freed memory is kept
// for the next requests instead of going back to the kernel, so a step's activations are not faulted in (and
// zeroed by the kernel) again at every step. A request takes the smallest idle block that holds it (best fit),
// split when bigger, and a freed block merges with idle neighbours, as a caching GPU allocator does: a step
// whose shapes differ from the last one's (other batch lengths, a layer's 96 MB intermediate then a 24 MB
// output) is served from the same pages, where whole blocks of one size each missed: encoding 600 SciFact
// abstracts mapped 457 blocks, 2.5 M page faults (README "Where the memory goes"). Sizes are rounded up to
// classes, four per doubling (at most 25 % over the request). What it keeps is bounded: a request that fits in
// no idle block unmaps the longest-idle blocks while the mapped total would pass `slack` times the most memory
// ever in use at once. With slack 1 (the default) the process never holds more than its own peak.
// LibTorch's CPU tensors reach it through model/cpu_allocator.h; it knows nothing of LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>

namespace ragmig {

struct BlockCacheStats {
  std::size_t in_use = 0;       ///< bytes of the blocks handed out (class sizes)
  std::size_t peak_in_use = 0;  ///< the most ever in use at once
  std::size_t mapped = 0;       ///< in use + idle
  std::size_t peak_mapped = 0;
  std::uint64_t hits = 0;    ///< requests served from idle memory
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
  /// Keeps `p` for later requests; false (and nothing done) when `p` is not a block this cache handed out.
  bool release(void* p);
  /// Unmaps every idle block.
  void trim();
  BlockCacheStats stats() const;

 private:
  struct Block {
    char* ptr;
    std::size_t size;
    bool idle;
    std::list<Block*>::iterator lru_at;                       ///< its place in lru_, while idle
    std::multimap<std::size_t, Block*>::iterator by_size_at;  ///< its place in idle_by_size_, while idle
  };
  // With the lock held.
  void make_idle(Block* b);
  void make_busy(Block* b);
  void unmap_idle(Block* b);
  void unmap_all_idle();

  const double slack_;
  mutable std::mutex mutex_;
  std::map<char*, Block*> blocks_;                    // every block, in use or idle, by address
  std::multimap<std::size_t, Block*> idle_by_size_;  // idle blocks by size: the best fit is a lower_bound
  std::list<Block*> lru_;                             // idle blocks, most recently freed first
  BlockCacheStats stats_;
};

}  // namespace ragmig
