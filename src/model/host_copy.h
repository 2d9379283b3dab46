// Host tensors onto a GPU without the host waiting for it. A copy from pageable memory may wait for the stream to
// drain (the driver stages it); one from pinned memory, queued non-blocking, never does: the host stays ahead of
// the device, launching the next kernels while the earlier ones run.
#pragma once

#include <torch/torch.h>

namespace ragmig::model {

/// `t` on `device`: itself where it is there already; from the host to a GPU through pinned memory (a copy into
/// it first unless `t` is pinned), non-blocking; other moves as Tensor::to.
torch::Tensor to_device_without_waiting(const torch::Tensor& t, const torch::Device& device);

}  // namespace ragmig::model
