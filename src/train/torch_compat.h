// The few LibTorch APIs that differ between 1.13 (Debian) and 2.x (PyTorch's wheels, CPU and CUDA), each
// behind one name. Autocast has its own RAII guard (autocast_guard.h); fused attention is in model/bert.cpp.
#pragma once

#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <optional>
#include <sstream>
#include <string>

// Device-generic allocator statistics (at::accelerator) came with LibTorch 2.9.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 9)
#include <ATen/DeviceAccelerator.h>
#define RAGMIG_DEVICE_MEMORY_STATS 1
#endif

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

/// The most memory LibTorch's caching allocator reserved on `device` since the previous call (which starts a
/// new peak), in MiB: what the process takes of its GPU or MIG slice, the CUDA context aside. nullopt on CPU
/// and with LibTorch before 2.9.
inline std::optional<double> take_device_memory_peak_mb(const torch::Device& device) {
#ifdef RAGMIG_DEVICE_MEMORY_STATS
  if (!device.is_cuda()) return std::nullopt;
  const c10::DeviceIndex index = device.has_index() ? device.index() : at::accelerator::getDeviceIndex();
  const auto stats = at::accelerator::getDeviceStats(index);
  at::accelerator::resetPeakStats(index);
  return static_cast<double>(stats.reserved_bytes[0].peak) / (1 << 20);
#else
  (void)device;
  return std::nullopt;
#endif
}

}  // namespace ragmig::train
