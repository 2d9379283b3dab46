// Per-replica slices of global batches (see data_shard.h): plain arithmetic, tested table-driven.
#include "train/data_shard.h"

#include <numeric>
#include <string>

#include "core/error.h"

namespace ragmig::train {

std::vector<int64_t> even_split(int64_t total, int replicas) {
  if (replicas < 1) throw ConfigError("replicas must be >= 1, got " + std::to_string(replicas));
  std::vector<int64_t> sizes(static_cast<size_t>(replicas), total / replicas);
  for (int64_t r = 0; r < total % replicas; ++r) ++sizes[static_cast<size_t>(r)];
  return sizes;
}

int64_t shard_offset(const std::vector<int64_t>& sizes, int rank) {
  RAGMIG_CHECK(rank >= 0 && static_cast<size_t>(rank) < sizes.size());
  return std::accumulate(sizes.begin(), sizes.begin() + rank, int64_t{0});
}

std::span<const int64_t> shard_of(std::span<const int64_t> global_batch, const std::vector<int64_t>& sizes, int rank) {
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  if (total != static_cast<int64_t>(global_batch.size()))
    throw ConfigError("replica batch sizes sum to " + std::to_string(total) + ", the global batch has " +
                      std::to_string(global_batch.size()) + " samples");
  const int64_t offset = shard_offset(sizes, rank);
  return global_batch.subspan(static_cast<size_t>(offset), static_cast<size_t>(sizes[static_cast<size_t>(rank)]));
}

}  // namespace ragmig::train
