// Blocked sliding-window attention (see local_attention.h). With blocks of w = half_window, the keys of query block
// i start at position (i - 1) w, so a query at offset s in its block and a key at offset t in its 3w keys are
// t - s - w positions apart: the window test |t - s - w| <= w is the same [w, 3w] pattern in every block.
#include "model/local_attention.h"

#include "model/bert.h"

namespace ragmig::model {
namespace {

int64_t blocks_of(int64_t length, int64_t w) { return (length + w - 1) / w; }

}  // namespace

bool local_blocks_pay(int64_t length, int64_t half_window) {
  return half_window > 0 && half_window <= (length - 1) / 8;  // 8 * half_window < length, without overflow
}

torch::Tensor query_blocks(const torch::Tensor& q, int64_t w) {
  const auto b = q.size(0), h = q.size(1), l = q.size(2), d = q.size(3), nb = blocks_of(l, w);
  const auto padded = torch::constant_pad_nd(q, {0, 0, 0, nb * w - l});
  return padded.reshape({b, h, nb, w, d}).transpose(1, 2).reshape({b * nb, h, w, d});
}

torch::Tensor key_blocks(const torch::Tensor& x, int64_t w) {
  const auto b = x.size(0), h = x.size(1), l = x.size(2), d = x.size(3), nb = blocks_of(l, w);
  // One block of zeros before, the end's padding and one more block after: block i's keys start at i * w.
  const auto padded = torch::constant_pad_nd(x, {0, 0, w, nb * w - l + w});
  // unfold: [B, H, nb, D, 3w] views of overlapping windows; then [B, nb, H, 3w, D], copied once.
  return padded.unfold(2, 3 * w, w).permute({0, 2, 1, 4, 3}).reshape({b * nb, h, 3 * w, d});
}

torch::Tensor local_block_bias(const torch::Tensor& mask, int64_t w, torch::ScalarType dtype) {
  const auto b = mask.size(0), l = mask.size(1), nb = blocks_of(l, w);
  const auto real = torch::constant_pad_nd(mask.ne(0).to(torch::kInt), {w, nb * w - l + w});  // 0 past the ends
  const auto keys = real.unfold(1, 3 * w, w).reshape({b * nb, 1, 1, 3 * w}).to(torch::kBool);
  const auto s = torch::arange(w, mask.options().dtype(torch::kLong)).view({w, 1});
  const auto t = torch::arange(3 * w, mask.options().dtype(torch::kLong)).view({1, 3 * w});
  const auto window = (t - s - w).abs().le(w).view({1, 1, w, 3 * w});
  const auto lowest = lowest_finite(dtype, mask.device());  // as the full path masks with
  return torch::where(keys.logical_and(window), torch::zeros({}, lowest.options()), lowest);
}

torch::Tensor from_query_blocks(const torch::Tensor& x, int64_t batch, int64_t length) {
  const auto h = x.size(1), w = x.size(2), d = x.size(3), nb = x.size(0) / batch;
  return x.reshape({batch, nb, h, w, d}).transpose(1, 2).reshape({batch, h, nb * w, d}).narrow(2, 0, length);
}

}  // namespace ragmig::model
