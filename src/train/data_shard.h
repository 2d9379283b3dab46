// How replicas share the data: the global batches come from the single-process sampler (text/batch_sampler),
// and each global batch is cut into contiguous per-replica slices in rank order. Positions are counted in
// global batches, so a resume with another number of replicas neither repeats nor drops a sample.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ragmig::train {

/// `total` samples over `replicas` as evenly as possible; the first total % replicas get one more.
std::vector<int64_t> even_split(int64_t total, int replicas);

/// Offset of replica `rank`'s slice within a global batch split as `sizes`.
int64_t shard_offset(const std::vector<int64_t>& sizes, int rank);

/// The rows replica `rank` trains on: global_batch[offset, offset + sizes[rank]). sizes must sum to the
/// batch's length. Throws ConfigError otherwise.
std::span<const int64_t> shard_of(std::span<const int64_t> global_batch, const std::vector<int64_t>& sizes, int rank);

}  // namespace ragmig::train
