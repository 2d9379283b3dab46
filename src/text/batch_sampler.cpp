// unique_positive_batches: a seeded permutation, then one pass that defers key collisions. Keys are first
// renumbered densely so the per-batch "key taken" test is an array look-up, which keeps the pass O(n).
// length_grouped_batches sorts slices of that permutation by length before the pass (as Hugging Face's
// LengthGroupedSampler does with its "megabatches", here in rounds of one example per key) and shuffles the
// resulting batches.
#include "text/batch_sampler.h"

#include <algorithm>
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

template <typename T>
void fisher_yates(std::vector<T>& items, std::mt19937_64& rng) {
  for (size_t i = items.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(bounded(rng, i));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace

std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> perm(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::mt19937_64 rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(epoch))));
  fisher_yates(perm, rng);
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
                    " distinct positives (examples of one query count once; text/batch_keys.h): no batch can be "
                    "filled without repeating one");

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

std::vector<std::vector<int64_t>> length_grouped_batches(std::span<const int64_t> positive_keys,
                                                         std::span<const int64_t> lengths, int64_t batch_size,
                                                         int64_t group, uint64_t seed, int64_t epoch) {
  if (lengths.size() != positive_keys.size())
    throw DataError("length grouping: " + std::to_string(lengths.size()) + " lengths for " +
                    std::to_string(positive_keys.size()) + " examples");
  if (group < 2) return unique_positive_batches(positive_keys, batch_size, seed, epoch);
  if (batch_size < 1) throw ConfigError("batch_size must be at least 1, got " + std::to_string(batch_size));
  std::vector<int64_t> order = epoch_permutation(static_cast<int64_t>(positive_keys.size()), seed, epoch);
  const size_t span = static_cast<size_t>(group * batch_size);
  // Examples of one positive share its length and would sort side by side, where the deferral rule could
  // only spread them one per batch; so a group is sorted in rounds: every key's first example by length,
  // then every key's second, and so on.
  std::vector<int64_t> round(order.size());
  std::unordered_map<int64_t, int64_t> seen;
  for (size_t begin = 0; begin < order.size(); begin += span) {
    const size_t end = std::min(order.size(), begin + span);
    seen.clear();
    for (size_t i = begin; i < end; ++i) {
      const auto ex = static_cast<size_t>(order[i]);
      round[ex] = seen[positive_keys[ex]]++;
    }
    std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(begin), order.begin() + static_cast<std::ptrdiff_t>(end),
                     [&](int64_t a, int64_t b) {
                       const auto ua = static_cast<size_t>(a), ub = static_cast<size_t>(b);
                       return round[ua] != round[ub] ? round[ua] < round[ub] : lengths[ua] > lengths[ub];
                     });
  }
  auto batches = batches_from_order(order, positive_keys, batch_size);
  // A stream of its own, so that the batch order does not repeat the permutation's draws.
  std::mt19937_64 rng(splitmix64(splitmix64(seed ^ 0x6c656e677468ull) ^ static_cast<uint64_t>(epoch)));
  fisher_yates(batches, rng);
  return batches;
}

}  // namespace ragmig::text
