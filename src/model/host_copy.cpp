// Host tensors onto a GPU through pinned memory (see host_copy.h).
#include "model/host_copy.h"

namespace ragmig::model {

torch::Tensor to_device_without_waiting(const torch::Tensor& t, const torch::Device& device) {
  if (t.device() == device) return t;
  if (!device.is_cuda() || !t.device().is_cpu()) return t.to(device);
  return (t.is_pinned() ? t : t.pin_memory()).to(device, /*non_blocking=*/true);
}

}  // namespace ragmig::model
