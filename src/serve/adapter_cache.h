// The adapters a server has in memory: loaded on first use, kept under a byte budget, the least recently used
// evicted first. An adapter in use by a queued or running batch stays alive through its shared_ptr even when
// evicted; the budget counts what the cache holds.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "monitor/metrics.h"
#include "serve/embedder.h"

namespace ragmig::serve {

class AdapterCache {
 public:
  using Loader = std::function<std::shared_ptr<const ServedAdapter>(const std::string& name)>;

  /// `budget_bytes`: what the cached adapters may take together; the most recently used one is kept even
  /// when it alone is larger.
  /// Counts hits, misses and evictions and the bytes held in `metrics` (may be null).
  AdapterCache(size_t budget_bytes, Loader loader, monitor::Registry* metrics);

  /// The adapter `name`, loaded on a miss (what the loader throws passes through and nothing is cached).
  std::shared_ptr<const ServedAdapter> get(const std::string& name);

  struct Stats {
    uint64_t hits = 0, misses = 0, evictions = 0;
    size_t bytes = 0, adapters = 0;
  };
  Stats stats() const;
  /// Cached names, most recently used first.
  std::vector<std::string> names() const;

 private:
  void evict_over_budget();

  size_t budget_;
  Loader loader_;
  mutable std::mutex mu_;
  std::list<std::shared_ptr<const ServedAdapter>> lru_;  // front = most recently used
  std::map<std::string, std::list<std::shared_ptr<const ServedAdapter>>::iterator> index_;
  Stats stats_;
  monitor::Counter* hits_ = nullptr;
  monitor::Counter* misses_ = nullptr;
  monitor::Counter* evictions_ = nullptr;
  monitor::Gauge* bytes_ = nullptr;
};

}  // namespace ragmig::serve
