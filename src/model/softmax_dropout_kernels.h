// The CPU loops of attention's probabilities (model/attention_probs.h), without LibTorch: each row of scores, plus
// its bias, through softmax and keyed dropout's mask in one pass over memory, and the way back in one pass over the
// gradient. LibTorch's own ops take a pass each over the [batch, heads, L, L] tensors (the bias added, softmax, the
// mask, and in backward the mask and softmax's backward), each over tens of MB at training sizes.
//
// AVX-512 (F, BW, DQ, VL) only, 16 lanes a step with masked tails; where the CPU lacks it (or tests cap model/
// keyed_dropout_kernels.h's MaskIsa below it) softmax_dropout_vectorised() is false and callers compose LibTorch's
// ops instead. Runs on LibTorch's intra-op threads, a range of rows each (model/cpu_lanes.h).
#pragma once

#include <c10/util/BFloat16.h>

#include <cstdint>

namespace ragmig::model {

/// A bias added to every row: rows are indexed by up to four leading dimensions (`sizes`, the last fastest, their
/// product the number of rows), and row (i0, i1, i2, i3)'s bias starts at data + i0 * strides[0] + ... + i3 *
/// strides[3] (stride 0 along a broadcast dimension); its n elements are contiguous. data null: no bias.
template <typename T>
struct RowBias {
  const T* data = nullptr;
  int64_t sizes[4] = {1, 1, 1, 1};
  int64_t strides[4] = {0, 0, 0, 0};
};

/// Whether this CPU runs the loops below (AVX-512 within keyed dropout's cap).
bool softmax_dropout_vectorised();

/// For `rows` rows of `n` elements: probs = softmax(scores + bias), in float and rounded to T once, and dropped = the
/// product multiply_by_mask_bits(probs, bits, scale) gives, bit for bit (`bits` over rows x n elements, element
/// r * n + j of row r). `probs` may be null (only dropped is wanted); `bits` null: no mask, dropped = probs (either
/// pointer may then be null). T: float or c10::BFloat16. Needs softmax_dropout_vectorised().
template <typename T>
void softmax_dropout_rows(const T* scores, const RowBias<T>& bias, int64_t rows, int64_t n, const uint8_t* bits,
                          T scale, T* probs, T* dropped);

/// Its backward, in place: `grad` (the gradient with respect to dropped) becomes the gradient with respect to
/// scores, g = grad x mask and grad = probs * (g - sum(g * probs)) along each row, in float (bits null: no mask).
/// `dropped` (may be null) gets the forward's dropped again on the way (what v's gradient is the product with),
/// bit for bit, without another pass over probs.
template <typename T>
void softmax_dropout_backward_rows(T* grad, const T* probs, int64_t rows, int64_t n, const uint8_t* bits, T scale,
                                   T* dropped = nullptr);

}  // namespace ragmig::model
