// The few LibTorch APIs that differ between 1.13 (Debian) and 2.x (PyTorch's wheels, CPU and CUDA), each
// behind one name. Autocast has its own RAII guard (autocast_guard.h); fused attention is in model/bert.cpp.
#pragma once

#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <sstream>
#include <string>

namespace ragmig::train {

/// The key of `param` in torch::optim::Optimizer::state(): the TensorImpl pointer in 2.x, its printed
/// form in 1.13.
inline auto optimizer_state_key(const torch::Tensor& param) {
#if TORCH_VERSION_MAJOR >= 2
  return static_cast<void*>(param.unsafeGetTensorImpl());
#else
  std::ostringstream out;
  out << param.unsafeGetTensorImpl();
  return out.str();
#endif
}

/// Waits until `device` has run the work queued on it, so that a clock read next measures that work rather
/// than its launch (CUDA kernels run asynchronously). Call it only where a step time is measured. No-op on CPU.
inline void finish_device_work(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

}  // namespace ragmig::train
