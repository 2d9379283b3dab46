// splitmix64: a small, well-mixed 64-bit hash. Used to derive reproducible seeds and draws from
// (seed, epoch, step) tuples; its output is the same on every platform, unlike <random>'s distributions.
#pragma once

#include <cstdint>

namespace ragmig {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace ragmig
