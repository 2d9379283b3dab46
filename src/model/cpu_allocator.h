// Where LibTorch's CPU tensors get their memory in ragmig's processes. A training step allocates and frees the
// same large buffers (activations, gradients, dropout masks) step after step. LibTorch's own CPU allocator
// passes each to malloc, and glibc serves every request over 32 MB with a fresh mapping that it unmaps on free:
// each step faults its activations in again (measured: 85 s of system time in 118 s of a fine-tune's wall).
// glibc's heap set to keep freed memory (core/heap_reuse.h) is fast but fragments: the same fine-tune peaked at
// 4.96 GB for 3.7 GB of tensors. Tensors of 64 KiB and more now come from a core/block_cache.h cache instead:
// freed memory kept for the next step (best fit, split and merged), never more than the most in use at once:
// 4.14 GB at the same speed, and 3.86 GB where a LoRA fine-tune took 5.55 GB. Smaller tensors come from
// LibTorch's allocator as before. README ("Where the memory goes") has the measurements and the commands.
#pragma once

#include <optional>
#include <string>

#include "core/block_cache.h"

namespace ragmig::model {

/// Makes the block cache LibTorch's CPU allocator (c10::SetCPUAllocator), once per process, before the first
/// tensor. RAGMIG_CPU_BLOCK_CACHE=0 in the environment keeps LibTorch's allocator. Returns whether the cache
/// serves the CPU tensors: false when turned off, or on a LibTorch older than 2.4 (another allocator interface).
bool install_cpu_block_cache();

/// Call first thing in a process that runs LibTorch: the block cache, or where it is off or unavailable glibc's
/// heap reuse (core/heap_reuse.h); and oneDNN's caches capped (model/onednn_cache.h).
void set_up_cpu_memory();

/// The cache's counters, or nullopt where it is not installed.
std::optional<BlockCacheStats> cpu_block_cache_stats();

/// What serves the CPU tensors' memory, for start events and benchmark headers: "block cache (>= 64 KiB), glibc"
/// with the cache, else core/heap_reuse.h's heap_allocator().
std::string cpu_allocator_name();

}  // namespace ragmig::model
