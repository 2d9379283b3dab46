// How a LibTorch process gets its big buffers. glibc serves every allocation over 32 MB (the most its
// dynamic threshold reaches) with a fresh mmap and unmaps it on free, so a training step whose activations
// are tens of MB each faults in, and the kernel zeroes, every page of them again at every step: measured on
// all-MiniLM-L6-v2 fine-tuning (batch 32, 256 tokens, bf16) as 18 s of system time in 60 s of wall. Served
// from the heap instead, freed buffers are reused as they are: 3 s, and 16 % more samples/s, at the same peak
// RSS (a step's buffers are the same every step). bench/train prints both sides.
#pragma once

namespace ragmig {

/// Serves large allocations from the heap and keeps freed memory for reuse (glibc's mallopt: no mmap, no
/// trimming), unless GLIBC_TUNABLES already says how malloc behaves. Call first thing in a LibTorch process.
/// Returns whether it changed anything (false where the C library is not glibc).
bool reuse_freed_heap_memory();

}  // namespace ragmig
