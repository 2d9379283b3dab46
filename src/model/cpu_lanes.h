// What model/'s CPU loops (keyed_dropout_kernels.cpp, softmax_dropout_kernels.cpp) share: a range split over
// LibTorch's OpenMP threads, and bf16 <-> float lanes for AVX2 and AVX-512. Only for files compiled with OpenMP
// and without LibTorch's headers (src/model/CMakeLists.txt); the vector functions carry their target attributes,
// the library itself is built for baseline x86-64.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RAGMIG_CPU_LANES_X86 1
#define RAGMIG_AVX2 __attribute__((target("avx2")))
#define RAGMIG_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#endif

namespace ragmig::model::lanes {

/// Elements below which a loop stays on the calling thread: 32K, as LibTorch's own grain.
constexpr int64_t kGrainElements = int64_t{1} << 15;

/// fn(begin, end) over [0, n) in one contiguous range per thread, on LibTorch's intra-op threads when n is at least
/// two grains (an OpenMP region inside another runs on one thread, as at::parallel_for's does).
template <typename F>
void for_each_range(int64_t n, int64_t grain, const F& fn) {
  if (n <= grain || omp_in_parallel() || omp_get_max_threads() == 1) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel
  {
    const int64_t threads = std::min<int64_t>(omp_get_num_threads(), (n + grain - 1) / grain);
    const int64_t chunk = (n + threads - 1) / threads, begin = omp_get_thread_num() * chunk;
    if (begin < n) fn(begin, std::min(n, begin + chunk));
  }
}

/// `count` (<= 24) mask bits from element `e` on (bit i = element e + i), of a buffer of `bytes` bytes.
inline uint32_t bits_from(const uint8_t* bits, int64_t bytes, int64_t e, int count) {
  const int64_t first = e / 8;
  uint32_t word = 0;
  if (bytes - first >= 4)
    std::memcpy(&word, bits + first, 4);
  else
    std::memcpy(&word, bits + first, static_cast<size_t>(bytes - first));
  return (word >> (e % 8)) & ((1u << count) - 1);
}

#ifdef RAGMIG_CPU_LANES_X86
// bf16 as its 16 bits: widened to float exactly; a float rounded back as c10::BFloat16(float) rounds it
// ((u + 0x7FFF + (u >> 16 & 1)) >> 16, NaN as 0x7FC0).
RAGMIG_AVX2 inline __m256 widen8(__m128i bf16) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bf16), 16));
}

RAGMIG_AVX2 inline __m128i round8(__m256 x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), odd), 16);
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7FC0), _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
  // 32 -> 16 bits: packus packs within each 128-bit half ([r0-3 r0-3 | r4-7 r4-7]); the permute joins r0-3, r4-7.
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xD8));
}

/// The mask's 8 values of one byte of bits: lane k = bit k ? scale : +0.
RAGMIG_AVX2 inline __m256 mask_lanes(uint32_t byte, __m256 scale) {
  const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i set = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(byte)), lane_bit);
  return _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(set, lane_bit)), scale);
}

// GCC 12 warns in its own _mm512_srli_epi64 and masked loads (their undefined pass-through: GCC bug 105593, fixed in
// 13); the includers silence it around their AVX-512 functions as here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
RAGMIG_AVX512 inline __m512 widen16(__m256i bf16) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bf16), 16));
}

RAGMIG_AVX512 inline __m256i round16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), odd), 16);
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FC0));
  return _mm512_cvtepi32_epi16(r);  // each <= 0xFFFF
}
#pragma GCC diagnostic pop
#endif

}  // namespace ragmig::model::lanes
