// Variable-length flash attention through ATen's _flash_attention_forward (LibTorch 2.2+; window sizes from 2.5).
// Its autograd formula is LibTorch's own (_flash_attention_backward), so training takes it as any other op.
#include "model/varlen_attention.h"

#include <atomic>
#include <iostream>

#include "model/torch_error.h"

namespace ragmig::model {
namespace {

// 0 untried, 1 works here, -1 failed once (the GPU or the build lacks it): then packed attention pads around the
// usual kernel for the rest of the process.
std::atomic<int> varlen_state{0};

}  // namespace

torch::Tensor varlen_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const Packing& packing, double dropout, std::optional<int64_t> half_window) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 2)
#if TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 5
  if (half_window) return {};  // no window arguments before 2.5
#endif
  if (varlen_state.load() < 0 || !q.is_cuda()) return {};
  const auto dtype = q.scalar_type();
  const auto d = q.size(-1);
  if ((dtype != torch::kHalf && dtype != torch::kBFloat16) || k.scalar_type() != dtype || v.scalar_type() != dtype ||
      d % 8 != 0 || d > 256)
    return {};
  try {
    // max_q / max_k: the padded length bounds every row's, and needs no copy from the device to know.
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 5
    auto out = std::get<0>(at::_flash_attention_forward(q, k, v, packing.cu_seqlens, packing.cu_seqlens, packing.length,
                                                         packing.length, dropout, false, false, std::nullopt,
                                                         half_window, half_window));
#else
    auto out = std::get<0>(at::_flash_attention_forward(q, k, v, packing.cu_seqlens, packing.cu_seqlens, packing.length,
                                                         packing.length, dropout, false, false));
#endif
    varlen_state.store(1);
    return out;
  } catch (const c10::Error& e) {
    if (varlen_state.exchange(-1) >= 0)
      std::cerr << "ragmig: variable-length flash attention is not available here (" << describe_torch_error(e, false)
                << "); packed attention pads around the usual kernel\n";
  }
#else
  (void)q, (void)k, (void)v, (void)packing, (void)dropout, (void)half_window;
#endif
  return {};
}

bool varlen_attention_used() { return varlen_state.load() > 0; }

}  // namespace ragmig::model
