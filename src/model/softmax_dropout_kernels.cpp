// Attention probabilities' CPU loops (see softmax_dropout_kernels.h). Compiled as keyed_dropout_kernels.cpp is:
// with OpenMP, on its own, without LibTorch's headers but c10's BFloat16 (src/model/CMakeLists.txt).
#include "model/softmax_dropout_kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "model/cpu_lanes.h"
#include "model/keyed_dropout_kernels.h"

namespace ragmig::model {
namespace {

// The loops' grain in rows of n elements.
int64_t grain_rows(int64_t n) { return std::max<int64_t>(1, lanes::kGrainElements / std::max<int64_t>(n, 1)); }

// Each row's bias (RowBias's indexing; null without one), row after row from `first` on: the row's indices are
// counted up instead of divided out of its number (four 64-bit divisions a row; bench_train --attention's bf16
// forward 15.0 -> 14.4 ms).
template <typename T>
class BiasRows {
 public:
  BiasRows(const RowBias<T>& bias, int64_t first) : bias_(bias) {
    for (int k = 3; k >= 0; --k) {
      index_[k] = first % bias.sizes[k];
      first /= bias.sizes[k];
    }
  }
  const T* row() const {
    if (!bias_.data) return nullptr;
    int64_t offset = 0;
    for (int k = 0; k < 4; ++k) offset += index_[k] * bias_.strides[k];
    return bias_.data + offset;
  }
  void next() {
    for (int k = 3; k >= 0 && ++index_[k] == bias_.sizes[k]; --k) index_[k] = 0;
  }

 private:
  const RowBias<T>& bias_;
  int64_t index_[4] = {0, 0, 0, 0};
};

#ifdef RAGMIG_CPU_LANES_X86
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's masked loads (see cpu_lanes.h)

// Lanes [0, count) of 16, count in [1, 16].
RAGMIG_AVX512 inline __mmask16 first_lanes(int64_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xFFFF : (1u << count) - 1);
}

// T's lanes as float (masked-off lanes 0), and stored rounded to T.
RAGMIG_AVX512 inline __m512 load16(const float* p, __mmask16 k) { return _mm512_maskz_loadu_ps(k, p); }
// bf16 through 256-bit masked loads and stores (VL): a 512-bit one's footprint would overlap the next 16 elements',
// and a masked store blocks a later load that overlaps it, masked off or not (the backward loads what it stores).
RAGMIG_AVX512 inline __m512 load16(const c10::BFloat16* p, __mmask16 k) {
  return lanes::widen16(_mm256_maskz_loadu_epi16(k, p));
}
RAGMIG_AVX512 inline void store16(float* p, __mmask16 k, __m512 x) { _mm512_mask_storeu_ps(p, k, x); }
RAGMIG_AVX512 inline void store16(c10::BFloat16* p, __mmask16 k, __m512 x) {
  _mm256_mask_storeu_epi16(p, k, lanes::round16(x));
}
// x as T holds it once stored.
RAGMIG_AVX512 inline __m512 rounded16(const float*, __m512 x) { return x; }
RAGMIG_AVX512 inline __m512 rounded16(const c10::BFloat16*, __m512 x) { return lanes::widen16(lanes::round16(x)); }

// The mask's lanes for elements [e, e + min(count, 16)): bit ? scale : +0, and +0 past them.
RAGMIG_AVX512 inline __m512 mask16(const uint8_t* bits, int64_t bytes, int64_t e, int64_t count, __m512 scale) {
  const auto lanes16 = lanes::bits_from(bits, bytes, e, static_cast<int>(std::min<int64_t>(count, 16)));
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(lanes16), scale);
}

// exp(x) for x <= 0 (NaN aside): Cephes' expf (x = n ln 2 + r, |r| <= ln 2 / 2, a degree-7 polynomial in r, ~1 ulp),
// 2^n by scalef. Below -87.3 (exp < 2^-126, FLT_MIN) it is 0: a subnormal result costs a microcode assist per
// instruction, and every padded key's score (the bias' lowest value) lands there.
RAGMIG_AVX512 inline __m512 exp16(__m512 x) {
  const __mmask16 normal = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_GE_OQ);
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
  const __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);  // ln 2 in two parts: the first exact in n
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  // Horner's rule written out: GCC -O2 kept a loop over the coefficients, a load and a branch a step.
  __m512 y = _mm512_fmadd_ps(_mm512_set1_ps(1.9875691500e-4f), r, _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_add_ps(_mm512_fmadd_ps(y, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  return _mm512_maskz_mov_ps(normal, _mm512_scalef_ps(y, n));
}

// One row: x (n floats of scratch) holds scores + bias, then their exponentials.
template <typename T>
RAGMIG_AVX512 void forward_row(const T* s, const T* b, int64_t n, const uint8_t* bits, int64_t bytes, int64_t e,
                               float keep_scale, float* x, T* probs, T* dropped) {
  const __m512 scale = _mm512_set1_ps(keep_scale);
  __m512 top = _mm512_set1_ps(-INFINITY);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = first_lanes(n - j);
    __m512 v = load16(s + j, k);
    if (b) v = _mm512_add_ps(v, load16(b + j, k));
    _mm512_mask_storeu_ps(x + j, k, v);
    top = _mm512_mask_max_ps(top, k, top, v);
  }
  const __m512 max = _mm512_set1_ps(_mm512_reduce_max_ps(top));
  __m512 total = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = first_lanes(n - j);
    const __m512 v = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), max));
    _mm512_mask_storeu_ps(x + j, k, v);
    total = _mm512_mask_add_ps(total, k, total, v);
  }
  const __m512 inverse = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(total));
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = first_lanes(n - j);
    const __m512 p = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + j), inverse);
    if (probs) store16(probs + j, k, p);
    if (!dropped) continue;
    if (bits)
      store16(dropped + j, k, _mm512_mul_ps(rounded16(dropped, p), mask16(bits, bytes, e + j, n - j, scale)));
    else
      store16(dropped + j, k, p);
  }
}

// One row of the backward, in place over g; dropped (if asked) gets p x mask, as multiply_by_mask_bits makes it.
template <typename T>
RAGMIG_AVX512 void backward_row(T* g, const T* p, int64_t n, const uint8_t* bits, int64_t bytes, int64_t e,
                                float keep_scale, T* dropped) {
  const __m512 scale = _mm512_set1_ps(keep_scale);
  __m512 dot = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = first_lanes(n - j);
    __m512 gj = load16(g + j, k);
    if (bits) gj = _mm512_mul_ps(gj, mask16(bits, bytes, e + j, n - j, scale));
    dot = _mm512_fmadd_ps(gj, load16(p + j, k), dot);  // masked-off lanes are 0
  }
  const __m512 sum = _mm512_set1_ps(_mm512_reduce_add_ps(dot));
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = first_lanes(n - j);
    const __m512 m = bits ? mask16(bits, bytes, e + j, n - j, scale) : _mm512_set1_ps(1.0f), pj = load16(p + j, k);
    store16(g + j, k, _mm512_mul_ps(pj, _mm512_sub_ps(_mm512_mul_ps(load16(g + j, k), m), sum)));
    if (dropped) store16(dropped + j, k, _mm512_mul_ps(pj, m));
  }
}
#pragma GCC diagnostic pop
#endif

}  // namespace

bool softmax_dropout_vectorised() { return mask_isa() == MaskIsa::Avx512; }

template <typename T>
void softmax_dropout_rows(const T* scores, const RowBias<T>& bias, int64_t rows, int64_t n, const uint8_t* bits,
                          T scale, T* probs, T* dropped) {
  RAGMIG_CHECK(softmax_dropout_vectorised(), "softmax_dropout_rows runs where the CPU has AVX-512");
#ifdef RAGMIG_CPU_LANES_X86
  const int64_t bytes = (rows * n + 7) / 8;
  lanes::for_each_range(rows, grain_rows(n), [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(n);
    BiasRows<T> rows_bias(bias, begin);
    for (int64_t r = begin; r < end; ++r, rows_bias.next()) {
      forward_row(scores + r * n, rows_bias.row(), n, bits, bytes, r * n, static_cast<float>(scale), scratch.data(),
                  probs ? probs + r * n : nullptr, dropped ? dropped + r * n : nullptr);
    }
  });
#endif
}

template <typename T>
void softmax_dropout_backward_rows(T* grad, const T* probs, int64_t rows, int64_t n, const uint8_t* bits, T scale,
                                   T* dropped) {
  RAGMIG_CHECK(softmax_dropout_vectorised(), "softmax_dropout_backward_rows runs where the CPU has AVX-512");
#ifdef RAGMIG_CPU_LANES_X86
  const int64_t bytes = (rows * n + 7) / 8;
  lanes::for_each_range(rows, grain_rows(n), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      backward_row(grad + r * n, probs + r * n, n, bits, bytes, r * n, static_cast<float>(scale),
                   dropped ? dropped + r * n : nullptr);
  });
#endif
}

#define RAGMIG_SOFTMAX_DROPOUT_TYPE(T)                                                                          \
  template void softmax_dropout_rows<T>(const T*, const RowBias<T>&, int64_t, int64_t, const uint8_t*, T, T*, \
                                        T*);                                                                    \
  template void softmax_dropout_backward_rows<T>(T*, const T*, int64_t, int64_t, const uint8_t*, T, T*);
RAGMIG_SOFTMAX_DROPOUT_TYPE(float)
RAGMIG_SOFTMAX_DROPOUT_TYPE(c10::BFloat16)
#undef RAGMIG_SOFTMAX_DROPOUT_TYPE

}  // namespace ragmig::model
