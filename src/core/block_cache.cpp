// BlockCache (see block_cache.h).
#include "core/block_cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <iterator>
#include <new>

namespace ragmig {
namespace {

constexpr std::size_t kPage = 4096;

char* map_block(std::size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
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
  if (auto fit = idle_by_size_.lower_bound(size); fit != idle_by_size_.end()) {
    block = fit->second;
    make_busy(block);
    if (block->size > size) {  // the rest stays idle, as its own block
      Block* rest = new Block{block->ptr + size, block->size - size, false, {}, {}};
      block->size = size;
      blocks_.emplace(rest->ptr, rest);
      make_idle(rest);
    }
    ++stats_.hits;
  } else {
    const auto bound = [&] {
      return static_cast<std::size_t>(slack_ * static_cast<double>(std::max(stats_.peak_in_use, stats_.in_use + size)));
    };
    while (!lru_.empty() && stats_.mapped + size > bound()) unmap_idle(lru_.back());
    char* p = map_block(size);
    if (!p) {  // the kernel refused: give back all that is idle and try once more
      unmap_all_idle();
      p = map_block(size);
      if (!p) throw std::bad_alloc();
    }
    block = new Block{p, size, false, {}, {}};
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
  auto it = blocks_.find(static_cast<char*>(p));
  if (it == blocks_.end() || it->second->idle) return false;
  Block* block = it->second;
  stats_.in_use -= block->size;
  // Merge with idle neighbours whose memory adjoins (one mapping split before, or two the kernel placed side by
  // side: munmap takes any range of pages).
  if (auto next = std::next(it); next != blocks_.end() && next->second->idle &&
                                 block->ptr + block->size == next->second->ptr) {
    Block* after = next->second;
    make_busy(after);
    block->size += after->size;
    blocks_.erase(next);
    delete after;
  }
  if (it != blocks_.begin()) {
    Block* before = std::prev(it)->second;
    if (before->idle && before->ptr + before->size == block->ptr) {
      make_busy(before);
      before->size += block->size;
      blocks_.erase(it);
      delete block;
      block = before;
    }
  }
  make_idle(block);
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

void BlockCache::make_idle(Block* b) {
  b->idle = true;
  lru_.push_front(b);
  b->lru_at = lru_.begin();
  b->by_size_at = idle_by_size_.emplace(b->size, b);
}

void BlockCache::make_busy(Block* b) {
  b->idle = false;
  lru_.erase(b->lru_at);
  idle_by_size_.erase(b->by_size_at);
}

void BlockCache::unmap_idle(Block* b) {
  make_busy(b);
  blocks_.erase(b->ptr);
  ::munmap(b->ptr, b->size);
  stats_.mapped -= b->size;
  ++stats_.unmapped;
  delete b;
}

void BlockCache::unmap_all_idle() {
  while (!lru_.empty()) unmap_idle(lru_.back());
}

}  // namespace ragmig
