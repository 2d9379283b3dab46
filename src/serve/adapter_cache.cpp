#include "serve/adapter_cache.h"

namespace ragmig::serve {

AdapterCache::AdapterCache(size_t budget_bytes, Loader loader, monitor::Registry* metrics)
    : budget_(budget_bytes), loader_(std::move(loader)) {
  if (!metrics) return;
  hits_ = &metrics->counter("ragmig_serve_adapter_cache_hits_total", "Requests for an adapter already in memory");
  misses_ = &metrics->counter("ragmig_serve_adapter_cache_misses_total", "Adapters loaded from disk on first use");
  evictions_ = &metrics->counter("ragmig_serve_adapter_cache_evictions_total", "Adapters dropped to stay under the budget");
  bytes_ = &metrics->gauge("ragmig_serve_adapter_cache_bytes", "Bytes of the adapters in memory");
}

std::shared_ptr<const ServedAdapter> AdapterCache::get(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const auto it = index_.find(name); it != index_.end()) {
    ++stats_.hits;
    if (hits_) hits_->inc();
    lru_.splice(lru_.begin(), lru_, it->second);
    return *it->second;
  }
  // Loaded under the lock: two requests missing the same adapter load it once. Adapters are small files
  // (a few MB), and hits never wait for a load of another adapter for longer than that.
  auto adapter = loader_(name);
  ++stats_.misses;
  if (misses_) misses_->inc();
  lru_.push_front(adapter);
  index_[name] = lru_.begin();
  stats_.bytes += adapter->bytes;
  evict_over_budget();
  if (bytes_) bytes_->set(static_cast<double>(stats_.bytes));
  return adapter;
}

void AdapterCache::evict_over_budget() {
  while (stats_.bytes > budget_ && lru_.size() > 1) {
    const auto& victim = lru_.back();
    stats_.bytes -= victim->bytes;
    index_.erase(victim->name);
    lru_.pop_back();
    ++stats_.evictions;
    if (evictions_) evictions_->inc();
  }
}

AdapterCache::Stats AdapterCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.adapters = lru_.size();
  return s;
}

std::vector<std::string> AdapterCache::names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& a : lru_) out.push_back(a->name);
  return out;
}

}  // namespace ragmig::serve
