// The CPU loops of keyed dropout (model/keyed_dropout.h), without LibTorch: a mask's keep bits from its key, and
// the product of a tensor's elements with a mask kept as bits, which every CPU keyed dropout runs in forward and
// again in backward.
//
// Both run on LibTorch's intra-op threads: this file is compiled with OpenMP, the runtime LibTorch's CPU kernels
// use (the same libgomp, its thread count set by at::set_num_threads). at::parallel_for itself could not be used:
// it is a header template whose parallel branch exists only in translation units compiled with -fopenmp, and in
// ragmig's (built without, to share one precompiled header) it ran on the calling thread alone.
//
// Each product is rounded to the element type as LibTorch's `x * mask` rounds it (bf16 and half: the product in
// float, rounded to the nearest even, c10's NaN), so the result equals x * mask bit for bit. Where the CPU has AVX2,
// fp32 and bf16 run 8 elements at a time, and the hashes four at a time (AVX-512: 16 elements, eight hashes): the
// library is built for baseline x86-64, where GCC vectorises neither bf16's rounding nor the bit unpacking (bf16
// ran at ~2.5 ns an element, 6-9x LibTorch's own x * mask) nor 64-bit multiplies.
#pragma once

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cstdint>
#include <vector>

namespace ragmig::model {

/// bits[i / 8] bit i % 8 = whether element i of the mask for (p, key) is kept, i in [0, n); bits past n are 0.
/// Element i keeps when its 16-bit uniform u (four per hash of (key, i / 4)) is >= p rounded to 1/65536, so
/// P(drop) = p at that resolution. Pure: the same bits whatever the thread count. p in [0, 1).
void fill_keep_bits(int64_t n, double p, uint64_t key, uint8_t* bits);

/// The same bits on the calling thread, one hash at a time: what the vectorised path must equal (tests).
void fill_keep_bits_scalar(int64_t n, double p, uint64_t key, uint8_t* bits);

/// The value a kept element is multiplied by: 1 / (1 - p) in float, then in T (a mask's value, as LibTorch's x * mask).
template <typename T>
T keep_scale(double p) {
  return static_cast<T>(static_cast<float>(1.0 / (1.0 - p)));
}

/// y[i] = x[i] * (bit i % 8 of bits[i / 8] ? scale : 0) for i in [0, n), rounded to T; y may be x. T: float,
/// double, c10::BFloat16 or c10::Half.
template <typename T>
void multiply_by_mask_bits(const T* x, T* y, const uint8_t* bits, int64_t n, T scale);

/// The same product on the calling thread, one element at a time: what the vectorised path must equal (tests).
template <typename T>
void multiply_by_mask_bits_scalar(const T* x, T* y, const uint8_t* bits, int64_t n, T scale);

/// Whether multiply_by_mask_bits runs a vectorised version for T on this CPU (fill_keep_bits does where float does).
template <typename T>
bool mask_bits_vectorised();

/// The instructions the vectorised loops use: AVX-512 (F, BW, DQ, VL: 16 elements and eight hashes a step) where the
/// CPU has them, else AVX2, else none; at most `cap_mask_isa`'s (tests check each path on one machine).
enum class MaskIsa { Scalar, Avx2, Avx512 };
MaskIsa mask_isa();
void cap_mask_isa(MaskIsa most);
/// Every path this CPU can run, widest first, Scalar last (benchmarks and tests run each through cap_mask_isa).
std::vector<MaskIsa> mask_isas();
const char* to_string(MaskIsa isa);  ///< "AVX-512", "AVX2", "scalar"

}  // namespace ragmig::model
