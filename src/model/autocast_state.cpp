#include "model/autocast_state.h"

#include <ATen/autocast_mode.h>

namespace ragmig::model {

AutocastState autocast_state(const torch::Device& device) {
  AutocastState s;
#if TORCH_VERSION_MAJOR >= 2
  s.enabled = at::autocast::is_autocast_enabled(device.type());
  s.dtype = at::autocast::get_autocast_dtype(device.type());
#else
  s.enabled = device.is_cuda() ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
  s.dtype = device.is_cuda() ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
#endif
  return s;
}

AutocastState set_autocast_state(const torch::Device& device, const AutocastState& state) {
  const AutocastState before = autocast_state(device);
#if TORCH_VERSION_MAJOR >= 2
  at::autocast::set_autocast_dtype(device.type(), state.dtype);
  at::autocast::set_autocast_enabled(device.type(), state.enabled);
#else
  if (device.is_cuda()) {
    at::autocast::set_autocast_gpu_dtype(state.dtype);
    at::autocast::set_enabled(state.enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(state.dtype);
    at::autocast::set_cpu_enabled(state.enabled);
  }
#endif
  return before;
}

}  // namespace ragmig::model
