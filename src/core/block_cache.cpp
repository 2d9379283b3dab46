// BlockCache (see block_cache.h).
#include "core/block_cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <new>

namespace ragmig {
namespace {

constexpr std::size_t kPage = 4096;

void* map_block(std::size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

BlockCache::BlockCache(double slack) : slack_(std::max(slack, 1.0)) {}

BlockCache::~BlockCache() {
  trim();
  for (auto& [ptr, block] : blocks_) delete block;  // in use: the memory stays mapped for whoever holds it
}

std::size_t BlockCache::size_class(std::size_t n) {
  const std::size_t step = std::max(std::bit_floor(std::max<std::size_t>(n, 1)) / 4, kPage);
  return (n + step - 1) / step * step;
}

void* BlockCache::allocate(std::size_t n) {
  const std::size_t size = size_class(n);
  std::lock_guard lock(mutex_);
  Block* block = nullptr;
  if (auto it = free_.find(size); it != free_.end() && !it->second.empty()) {
    block = it->second.back();
    it->second.pop_back();
    idle_.erase(block->idle_at);
    ++stats_.hits;
  } else {
    const auto bound = [&] {
      return static_cast<std::size_t>(slack_ * static_cast<double>(std::max(stats_.peak_in_use, stats_.in_use + size)));
    };
    while (!idle_.empty() && stats_.mapped + size > bound()) unmap_idle(idle_.back());
    void* p = map_block(size);
    if (!p) {  // the kernel refused: give back all that is idle and try once more
      unmap_all_idle();
      p = map_block(size);
      if (!p) throw std::bad_alloc();
    }
    block = new Block{p, size, {}};
    blocks_.emplace(p, block);
    stats_.mapped += size;
    stats_.peak_mapped = std::max(stats_.peak_mapped, stats_.mapped);
    ++stats_.misses;
  }
  stats_.in_use += block->size;
  stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  return block->ptr;
}

bool BlockCache::release(void* p) {
  std::lock_guard lock(mutex_);
  auto it = blocks_.find(p);
  if (it == blocks_.end()) return false;
  Block* block = it->second;
  stats_.in_use -= block->size;
  free_[block->size].push_back(block);
  idle_.push_front(block);
  block->idle_at = idle_.begin();
  return true;
}

void BlockCache::trim() {
  std::lock_guard lock(mutex_);
  unmap_all_idle();
}

BlockCacheStats BlockCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void BlockCache::unmap_idle(Block* b) {
  auto& same_class = free_[b->size];
  same_class.erase(std::find(same_class.begin(), same_class.end(), b));
  idle_.erase(b->idle_at);
  blocks_.erase(b->ptr);
  ::munmap(b->ptr, b->size);
  stats_.mapped -= b->size;
  ++stats_.unmapped;
  delete b;
}

void BlockCache::unmap_all_idle() {
  while (!idle_.empty()) unmap_idle(idle_.back());
}

}  // namespace ragmig
