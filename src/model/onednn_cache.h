// oneDNN's caches in ragmig's processes. LibTorch runs CPU matmuls (bf16 always, fp32 in part) through ideep, its
// oneDNN wrapper, and both keep what they build per operand shape: oneDNN its JIT-compiled primitives (the last
// 1,024 by default, ONEDNN_PRIMITIVE_CACHE_CAPACITY), ideep its computations holding those primitives (the last
// 1,024 per thread, LRU_CACHE_CAPACITY). A training step's shapes change with its batch's lengths — every step when
// batches are unpadded, whose token counts rarely repeat — so both fill with entries that are seldom met again, and
// what ideep holds oneDNN cannot free. Measured on examples/train-squad-tiny.toml, 150 steps (a 2-layer model builds
// ~7 new primitives a step padded, ~19 unpadded, ~1 ms each): peak RSS 1,488 -> 627 MB unpadded and 865 -> 609 MB
// padded with both at 128, at the same wall time (bench/train/onednn_cache.sh prints it).
#pragma once

#include <cstdint>

namespace ragmig::model {

inline constexpr int64_t kOneDnnCacheCapacity = 128;  ///< entries, in each of the two caches

/// Sets ONEDNN_PRIMITIVE_CACHE_CAPACITY and LRU_CACHE_CAPACITY to kOneDnnCacheCapacity where they are not set
/// already (the primitive cache's older name DNNL_PRIMITIVE_CACHE_CAPACITY counts as set). Both are read once, at
/// the first CPU matmul, so call this before it (set_up_cpu_memory does).
void cap_onednn_caches();

struct OneDnnCacheCapacities {
  int64_t primitives = 1024;  ///< oneDNN's primitive cache
  int64_t ideep = 1024;       ///< ideep's per-thread computation cache
};

/// The capacities the two caches take (or took) from the environment, read as they read it (atoi; 1,024 where
/// unset): for start events.
OneDnnCacheCapacities onednn_cache_capacities();

}  // namespace ragmig::model
