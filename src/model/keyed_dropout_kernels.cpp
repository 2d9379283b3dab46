// Keyed dropout's CPU loops (see keyed_dropout_kernels.h). Compiled with OpenMP, outside the unity batches and
// without the precompiled <torch/torch.h> (src/model/CMakeLists.txt): it includes no LibTorch header.
#include "model/keyed_dropout_kernels.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/splitmix.h"
#include "model/cpu_lanes.h"

namespace ragmig::model {
namespace {

// The loops' grain in bytes of mask bits (a byte: eight elements).
constexpr int64_t kGrainBytes = lanes::kGrainElements / 8;

// Element i keeps when its 16-bit uniform u (four per hash of (key, i / 4)) is >= drop = p in 1/65536ths.
uint32_t drop_threshold(double p) {
  RAGMIG_CHECK(p >= 0 && p < 1, "dropout probability in [0, 1)");
  return static_cast<uint32_t>(std::lround(p * 65536.0));
}

// The keep bits of hash h's four elements (bit k: element 4h + k).
inline uint32_t keep_nibble(uint64_t key, int64_t h, uint32_t drop) {
  const uint64_t r = splitmix64(key ^ splitmix64(static_cast<uint64_t>(h)));
  uint32_t kept = 0;
  for (int k = 0; k < 4; ++k) kept |= static_cast<uint32_t>(((r >> (16 * k)) & 0xFFFFu) >= drop) << k;
  return kept;
}

// bits[b] for b in [begin, end): hashes 2b and 2b + 1.
void fill_bytes(int64_t begin, int64_t end, uint32_t drop, uint64_t key, uint8_t* bits) {
  for (int64_t b = begin; b < end; ++b)
    bits[b] = static_cast<uint8_t>(keep_nibble(key, 2 * b, drop) | keep_nibble(key, 2 * b + 1, drop) << 4);
}

// Bits past element n - 1 (in its byte) are 0.
void clear_past(int64_t n, uint8_t* bits) {
  if (n % 8) bits[n / 8] &= static_cast<uint8_t>((1u << (n % 8)) - 1);
}

// What this CPU offers (asked once), and the cap tests lower to check each path on one machine.
MaskIsa detected_isa() {
  static const MaskIsa detected = [] {
#ifdef RAGMIG_CPU_LANES_X86
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
      return MaskIsa::Avx512;
    if (__builtin_cpu_supports("avx2")) return MaskIsa::Avx2;
#endif
    return MaskIsa::Scalar;
  }();
  return detected;
}

std::atomic<MaskIsa> isa_cap{MaskIsa::Avx512};

#ifdef RAGMIG_CPU_LANES_X86
using lanes::mask_lanes;

// Elements [0, 8 * bytes). Each lane's product is mulss's, as the scalar loop's and LibTorch's own.
RAGMIG_AVX2 void multiply_avx2(const float* x, float* y, const uint8_t* bits, int64_t bytes, float scale) {
  const __m256 s = _mm256_set1_ps(scale);
  for (int64_t b = 0; b < bytes; ++b)
    _mm256_storeu_ps(y + 8 * b, _mm256_mul_ps(_mm256_loadu_ps(x + 8 * b), mask_lanes(bits[b], s)));
}

// bf16 as its 16 bits: widened to float, multiplied in float, rounded back as c10::BFloat16(float) rounds.
RAGMIG_AVX2 void multiply_avx2(const uint16_t* x, uint16_t* y, const uint8_t* bits, int64_t bytes, float scale) {
  const __m256 s = _mm256_set1_ps(scale);
  for (int64_t b = 0; b < bytes; ++b) {
    const __m256 p = _mm256_mul_ps(lanes::widen8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 8 * b))),
                                   mask_lanes(bits[b], s));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + 8 * b), lanes::round8(p));
  }
}

// 64-bit lanes times a constant, modulo 2^64: AVX2 multiplies 32 x 32 -> 64 bits only.
RAGMIG_AVX2 inline __m256i multiply_lanes(__m256i a, uint64_t c) {
  const __m256i lo = _mm256_set1_epi64x(static_cast<int64_t>(c & 0xFFFFFFFFu));
  const __m256i hi = _mm256_set1_epi64x(static_cast<int64_t>(c >> 32));
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), lo), _mm256_mul_epu32(a, hi));
  return _mm256_add_epi64(_mm256_mul_epu32(a, lo), _mm256_slli_epi64(cross, 32));
}

// splitmix64 (core/splitmix.h) of four lanes.
RAGMIG_AVX2 inline __m256i splitmix_lanes(__m256i x) {
  x = _mm256_add_epi64(x, _mm256_set1_epi64x(static_cast<int64_t>(0x9E3779B97F4A7C15ull)));
  x = multiply_lanes(_mm256_xor_si256(x, _mm256_srli_epi64(x, 30)), 0xBF58476D1CE4E5B9ull);
  x = multiply_lanes(_mm256_xor_si256(x, _mm256_srli_epi64(x, 27)), 0x94D049BB133111EBull);
  return _mm256_xor_si256(x, _mm256_srli_epi64(x, 31));
}

// fill_bytes eight hashes (four bytes) at a time from `begin`; returns where it stopped (the rest: fill_bytes).
// drop <= 0xFFFF: each 16-bit uniform u keeps when max(u, drop) == u (unsigned).
RAGMIG_AVX2 int64_t fill_bytes_avx2(int64_t begin, int64_t end, uint32_t drop, uint64_t key, uint8_t* bits) {
  const __m256i k = _mm256_set1_epi64x(static_cast<int64_t>(key));
  const __m256i d = _mm256_set1_epi16(static_cast<int16_t>(static_cast<uint16_t>(drop)));
  const __m256i eight = _mm256_set1_epi64x(8);
  __m256i h0 = _mm256_add_epi64(_mm256_set1_epi64x(2 * begin), _mm256_setr_epi64x(0, 1, 2, 3));
  __m256i h1 = _mm256_add_epi64(h0, _mm256_set1_epi64x(4));
  int64_t b = begin;
  for (; b + 4 <= end; b += 4) {
    const __m256i r0 = splitmix_lanes(_mm256_xor_si256(k, splitmix_lanes(h0)));
    const __m256i r1 = splitmix_lanes(_mm256_xor_si256(k, splitmix_lanes(h1)));
    const __m256i keep0 = _mm256_cmpeq_epi16(_mm256_max_epu16(r0, d), r0);
    const __m256i keep1 = _mm256_cmpeq_epi16(_mm256_max_epu16(r1, d), r1);
    // 16-bit lanes -> bytes in hash order (packs works per 128-bit half; the permute restores the order), then one
    // bit each: bit 4j + f = field f of hash 2b + j, the layout fill_bytes writes.
    const __m256i bytes = _mm256_permute4x64_epi64(_mm256_packs_epi16(keep0, keep1), 0xD8);
    const auto word = static_cast<uint32_t>(_mm256_movemask_epi8(bytes));
    std::memcpy(bits + b, &word, 4);
    h0 = _mm256_add_epi64(h0, eight);
    h1 = _mm256_add_epi64(h1, eight);
  }
  return b;
}

// AVX-512: 16 elements a step, their 16 mask lanes straight from two bytes of bits (a mask register), and the
// hashes' 64-bit multiplies native (AVX512DQ). The same products and bits as the AVX2 and scalar loops.
// GCC 12 warns in its own _mm512_srli_epi64 (its undefined pass-through: GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Lane k = bit k of the 16 bits at `bits` ? scale : +0.
RAGMIG_AVX512 inline __m512 mask_lanes16(const uint8_t* bits, __m512 scale) {
  uint16_t k;
  std::memcpy(&k, bits, 2);
  return _mm512_maskz_mov_ps(k, scale);
}

// Elements [0, 8 * bytes); an odd last byte through the AVX2 loop.
RAGMIG_AVX512 void multiply_avx512(const float* x, float* y, const uint8_t* bits, int64_t bytes, float scale) {
  const __m512 s = _mm512_set1_ps(scale);
  int64_t b = 0;
  for (; b + 2 <= bytes; b += 2)
    _mm512_storeu_ps(y + 8 * b, _mm512_mul_ps(_mm512_loadu_ps(x + 8 * b), mask_lanes16(bits + b, s)));
  if (b < bytes) multiply_avx2(x + 8 * b, y + 8 * b, bits + b, bytes - b, scale);
}

RAGMIG_AVX512 void multiply_avx512(const uint16_t* x, uint16_t* y, const uint8_t* bits, int64_t bytes, float scale) {
  const __m512 s = _mm512_set1_ps(scale);
  int64_t b = 0;
  for (; b + 2 <= bytes; b += 2) {
    const __m512 p = _mm512_mul_ps(lanes::widen16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 8 * b))),
                                   mask_lanes16(bits + b, s));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + 8 * b), lanes::round16(p));
  }
  if (b < bytes) multiply_avx2(x + 8 * b, y + 8 * b, bits + b, bytes - b, scale);
}

RAGMIG_AVX512 inline __m512i splitmix_lanes512(__m512i x) {
  x = _mm512_add_epi64(x, _mm512_set1_epi64(static_cast<int64_t>(0x9E3779B97F4A7C15ull)));
  x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 30)),
                         _mm512_set1_epi64(static_cast<int64_t>(0xBF58476D1CE4E5B9ull)));
  x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 27)),
                         _mm512_set1_epi64(static_cast<int64_t>(0x94D049BB133111EBull)));
  return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}

// fill_bytes eight hashes (four bytes) at a time: hash j's four 16-bit fields are mask bits 4j..4j+3, the layout
// fill_bytes writes. drop <= 0xFFFF.
RAGMIG_AVX512 int64_t fill_bytes_avx512(int64_t begin, int64_t end, uint32_t drop, uint64_t key, uint8_t* bits) {
  const __m512i k = _mm512_set1_epi64(static_cast<int64_t>(key));
  const __m512i d = _mm512_set1_epi16(static_cast<int16_t>(static_cast<uint16_t>(drop)));
  const __m512i eight = _mm512_set1_epi64(8);
  __m512i h = _mm512_add_epi64(_mm512_set1_epi64(2 * begin), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
  int64_t b = begin;
  for (; b + 4 <= end; b += 4) {
    const __mmask32 keep = _mm512_cmpge_epu16_mask(splitmix_lanes512(_mm512_xor_si512(k, splitmix_lanes512(h))), d);
    const auto word = static_cast<uint32_t>(keep);
    std::memcpy(bits + b, &word, 4);
    h = _mm512_add_epi64(h, eight);
  }
  return b;
}
#pragma GCC diagnostic pop
#endif

}  // namespace

template <typename T>
void multiply_by_mask_bits_scalar(const T* x, T* y, const uint8_t* bits, int64_t n, T scale) {
  const T values[2] = {static_cast<T>(0.0f), scale};
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * values[(bits[i / 8] >> (i % 8)) & 1];
}

MaskIsa mask_isa() { return std::min(detected_isa(), isa_cap.load()); }

void cap_mask_isa(MaskIsa most) { isa_cap.store(most); }

std::vector<MaskIsa> mask_isas() {
  std::vector<MaskIsa> isas;
  for (const MaskIsa isa : {MaskIsa::Avx512, MaskIsa::Avx2, MaskIsa::Scalar})
    if (isa <= detected_isa()) isas.push_back(isa);
  return isas;
}

const char* to_string(MaskIsa isa) {
  return isa == MaskIsa::Avx512 ? "AVX-512" : isa == MaskIsa::Avx2 ? "AVX2" : "scalar";
}

template <typename T>
bool mask_bits_vectorised() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, c10::BFloat16>) return mask_isa() != MaskIsa::Scalar;
  return false;
}

void fill_keep_bits_scalar(int64_t n, double p, uint64_t key, uint8_t* bits) {
  fill_bytes(0, (n + 7) / 8, drop_threshold(p), key, bits);
  clear_past(n, bits);
}

void fill_keep_bits(int64_t n, double p, uint64_t key, uint8_t* bits) {
  const uint32_t drop = drop_threshold(p);
  [[maybe_unused]] const MaskIsa isa = mask_isa();
  lanes::for_each_range((n + 7) / 8, kGrainBytes, [&](int64_t begin, int64_t end) {
    int64_t done = begin;
#ifdef RAGMIG_CPU_LANES_X86
    if (isa == MaskIsa::Avx512 && drop <= 0xFFFF) done = fill_bytes_avx512(begin, end, drop, key, bits);
    if (isa == MaskIsa::Avx2 && drop <= 0xFFFF) done = fill_bytes_avx2(begin, end, drop, key, bits);
#endif
    fill_bytes(done, end, drop, key, bits);
  });
  clear_past(n, bits);
}

template <typename T>
void multiply_by_mask_bits(const T* x, T* y, const uint8_t* bits, int64_t n, T scale) {
  [[maybe_unused]] const MaskIsa isa = mask_bits_vectorised<T>() ? mask_isa() : MaskIsa::Scalar;
  lanes::for_each_range((n + 7) / 8, kGrainBytes, [&](int64_t begin, int64_t end) {
    const int64_t first = 8 * begin, count = std::min(8 * end, n) - first;
    int64_t done = 0;
#ifdef RAGMIG_CPU_LANES_X86
    if (isa != MaskIsa::Scalar) {
      done = count / 8 * 8;
      const auto multiply = [&](const auto* in, auto* out, float s) {
        if (isa == MaskIsa::Avx512)
          multiply_avx512(in, out, bits + begin, count / 8, s);
        else
          multiply_avx2(in, out, bits + begin, count / 8, s);
      };
      if constexpr (std::is_same_v<T, float>) {
        multiply(x + first, y + first, scale);
      } else if constexpr (std::is_same_v<T, c10::BFloat16>) {
        multiply(reinterpret_cast<const uint16_t*>(x + first), reinterpret_cast<uint16_t*>(y + first),
                 static_cast<float>(scale));
      }
    }
#endif
    multiply_by_mask_bits_scalar(x + first + done, y + first + done, bits + begin + done / 8, count - done, scale);
  });
}

#define RAGMIG_MASK_BITS_TYPE(T)                                                                      \
  template void multiply_by_mask_bits<T>(const T*, T*, const uint8_t*, int64_t, T);                 \
  template void multiply_by_mask_bits_scalar<T>(const T*, T*, const uint8_t*, int64_t, T);          \
  template bool mask_bits_vectorised<T>();
RAGMIG_MASK_BITS_TYPE(float)
RAGMIG_MASK_BITS_TYPE(double)
RAGMIG_MASK_BITS_TYPE(c10::BFloat16)
RAGMIG_MASK_BITS_TYPE(c10::Half)
#undef RAGMIG_MASK_BITS_TYPE

}  // namespace ragmig::model
