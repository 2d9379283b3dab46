// unique_positive_batches: a seeded permutation, then one pass that defers key collisions. Keys are first
// renumbered densely so the per-batch "key taken" test is an array look-up, which keeps the pass O(n).
#include "text/batch_sampler.h"

#include <deque>
#include <random>
#include <unordered_map>

#include "core/error.h"
#include "core/splitmix.h"

namespace ragmig::text {

namespace {

// Uniform in [0, bound) by rejection: draws at or above the largest multiple of bound are redrawn.
uint64_t bounded(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;  // a multiple of bound, so [0, limit) is fair
  while (true) {
    const uint64_t x = rng();
    if (x < limit) return x % bound;
  }
}

}  // namespace

std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> perm(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::mt19937_64 rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(epoch))));
  for (size_t i = perm.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(bounded(rng, i));
    std::swap(perm[i - 1], perm[j]);
  }
  return perm;
}

std::vector<std::vector<int64_t>> batches_from_order(std::span<const int64_t> order,
                                                     std::span<const int64_t> positive_keys,
                                                     int64_t batch_size) {
  if (batch_size < 1) throw ConfigError("batch_size must be at least 1, got " + std::to_string(batch_size));
  std::unordered_map<int64_t, int32_t> dense_of;
  std::vector<int32_t> dense(positive_keys.size());
  for (size_t i = 0; i < positive_keys.size(); ++i)
    dense[i] = dense_of.emplace(positive_keys[i], static_cast<int32_t>(dense_of.size())).first->second;
  const int64_t n_keys = static_cast<int64_t>(dense_of.size());
  if (batch_size > n_keys)
    throw DataError("batch_size " + std::to_string(batch_size) + " exceeds the " + std::to_string(n_keys) +
                    " distinct positives: no batch can be filled without repeating one");

  const size_t b = static_cast<size_t>(batch_size);
  std::vector<int64_t> taken_in(static_cast<size_t>(n_keys), -1);  // key -> last batch that holds it
  std::vector<std::deque<int64_t>> waiting(static_cast<size_t>(n_keys));
  std::deque<int32_t> waiting_keys;  // keys with waiting examples, served round robin
  std::vector<std::vector<int64_t>> batches;
  size_t next = 0;
  while (true) {
    const int64_t batch_no = static_cast<int64_t>(batches.size());
    std::vector<int64_t> batch;
    batch.reserve(b);
    // Deferred examples first: a fresh batch holds no key yet, so each waiting key can give one.
    const size_t serve = std::min(b, waiting_keys.size());
    std::vector<int32_t> still_waiting;
    for (size_t i = 0; i < serve; ++i) {
      const int32_t k = waiting_keys.front();
      waiting_keys.pop_front();
      auto& q = waiting[static_cast<size_t>(k)];
      batch.push_back(q.front());
      q.pop_front();
      taken_in[static_cast<size_t>(k)] = batch_no;
      if (!q.empty()) still_waiting.push_back(k);
    }
    while (batch.size() < b && next < order.size()) {
      const int64_t ex = order[next++];
      if (ex < 0 || static_cast<size_t>(ex) >= dense.size())
        throw DataError("example index " + std::to_string(ex) + " out of range");
      const int32_t k = dense[static_cast<size_t>(ex)];
      if (taken_in[static_cast<size_t>(k)] == batch_no) {
        auto& q = waiting[static_cast<size_t>(k)];
        if (q.empty()) waiting_keys.push_back(k);
        q.push_back(ex);
      } else {
        batch.push_back(ex);
        taken_in[static_cast<size_t>(k)] = batch_no;
      }
    }
    // Keys just served with more still waiting queue behind those deferred in this batch.
    for (int32_t k : still_waiting) waiting_keys.push_back(k);
    if (batch.size() < b) break;  // the order is spent and the waiting keys cannot fill a batch
    batches.push_back(std::move(batch));
  }
  return batches;
}

std::vector<std::vector<int64_t>> unique_positive_batches(std::span<const int64_t> positive_keys,
                                                          int64_t batch_size, uint64_t seed, int64_t epoch) {
  const std::vector<int64_t> order =
      epoch_permutation(static_cast<int64_t>(positive_keys.size()), seed, epoch);
  return batches_from_order(order, positive_keys, batch_size);
}

}  // namespace ragmig::text
