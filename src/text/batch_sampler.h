// Batches for in-batch-negative contrastive training: each batch holds distinct positive passages, since a
// duplicate positive would be scored as its own negative (the trainer's keys, text/batch_keys.h, also keep
// a query's other positives out of its batch). Pure functions of their inputs, bit-identical
// on every platform (own Fisher-Yates over mt19937_64, no std::shuffle or std distributions).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ragmig::text {

/// Splits one epoch into batches of exactly batch_size example indices such that no batch holds two
/// examples with the same positive_key. Order is a seeded permutation of 0..n-1 derived from (seed, epoch);
/// an example that would repeat a key in the current batch is deferred to the next batch that can take it;
/// leftovers that cannot fill a final full batch are dropped (the next epoch reshuffles them). Throws
/// DataError if batch_size exceeds the number of distinct keys, ConfigError if batch_size < 1.
std::vector<std::vector<int64_t>> unique_positive_batches(std::span<const int64_t> positive_keys,
                                                          int64_t batch_size, uint64_t seed, int64_t epoch);

/// unique_positive_batches with length grouping, so that a batch pads little: the epoch's permutation is cut
/// into groups of `group` batches' worth of examples; each group is ordered in rounds (every positive key's
/// first example, then every key's second, ...), each round by `lengths`, longest first (ties keep the
/// permutation's order); the whole order is batched with the deferral rule, and the batches are shuffled by
/// (seed, epoch). As there, only examples that cannot fill a last batch are dropped; group < 2 gives
/// unique_positive_batches exactly. Throws as unique_positive_batches, and DataError when lengths and
/// positive_keys differ in size.
std::vector<std::vector<int64_t>> length_grouped_batches(std::span<const int64_t> positive_keys,
                                                         std::span<const int64_t> lengths, int64_t batch_size,
                                                         int64_t group, uint64_t seed, int64_t epoch);

/// The permutation of 0..n-1 that unique_positive_batches uses for (seed, epoch).
std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed, int64_t epoch);

/// The batching step on a given order (indices into positive_keys). Deferred examples are served first in
/// each new batch, one per key, keys in the order they were first deferred (round robin while a key keeps
/// several waiting); then examples are taken from `order`, deferring any whose key the batch already has.
std::vector<std::vector<int64_t>> batches_from_order(std::span<const int64_t> order,
                                                     std::span<const int64_t> positive_keys,
                                                     int64_t batch_size);

}  // namespace ragmig::text
