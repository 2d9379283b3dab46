// How a LibTorch process gets its big buffers when its CPU tensors do not come from the block cache
// (model/cpu_allocator.h; RAGMIG_CPU_BLOCK_CACHE=0, or LibTorch before 2.4), and what serves its other memory.
// glibc serves every allocation over 32 MB (the most its dynamic threshold reaches) with a fresh mmap and
// unmaps it on free, so a training step whose activations are tens of MB each faults in, and the kernel
// zeroes, every page of them again at every step: measured on all-MiniLM-L6-v2 fine-tuning (batch 32, 256
// tokens, fp32, 2-core EPYC) as 85 s of system time in 118 s of wall. Two ways out here, both keep freed memory:
// - glibc told to serve big requests from its heap and never trim it (without the cache, the default): 76 s,
//   11 s, peak RSS 4.9 GB (its one heap fragments: freed holes that the next step's differently sized buffers
//   do not fit);
// - jemalloc linked into ragmig-torch (CMake -DRAGMIG_JEMALLOC=ON) with its purging off (malloc_conf in
//   heap_reuse.cpp): 73 s, 10 s, 4.3 GB; but a LoRA fine-tune's RSS grew under it by ~40 MB a step (7.2 GB
//   after 58 steps) where glibc's heap stopped at 6.7 GB, so it is not the default.
// README ("LoRA adapters") has the table and the commands.
#pragma once

#include <string>

namespace ragmig {

/// Keeps freed memory for reuse: nothing to do under jemalloc (its settings are compiled in); on glibc, big
/// requests from the heap and no trimming (mallopt), unless GLIBC_TUNABLES already says how malloc behaves.
/// Call first thing in a LibTorch process. Returns whether freed memory is kept.
bool reuse_freed_heap_memory();

/// What serves this process's memory, for the start event and the benchmarks' headers: "jemalloc 5.3.0
/// (dirty_decay_ms -1, muzzy_decay_ms -1)", "glibc, heap reuse", "glibc (GLIBC_TUNABLES)" or "glibc".
std::string heap_allocator();

}  // namespace ragmig
