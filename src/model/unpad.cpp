// Packing and unpacking (see unpad.h). Both directions are one index_select / index_copy, whose gradients are
// each other: no atomics (the indices are distinct), so results stay deterministic on CPU and GPU.
#include "model/unpad.h"

#include "core/error.h"
#include "model/host_copy.h"

namespace ragmig::model {

Packing make_packing(const torch::Tensor& mask) {
  if (mask.dim() != 2) throw DataError("a packing needs a [batch, length] mask, got " + std::to_string(mask.dim()) + " dims");
  Packing p;
  p.rows = mask.size(0);
  p.length = mask.size(1);
  const auto real = mask.ne(0);
  p.index = real.flatten().nonzero().flatten();
  auto starts = torch::zeros({p.rows + 1}, torch::TensorOptions().dtype(torch::kInt).device(mask.device()));
  starts.narrow(0, 1, p.rows).copy_(real.sum(1).cumsum(0));
  p.cu_seqlens = starts;
  return p;
}

Packing make_packing(const torch::Tensor& mask, const torch::Device& device) {
  Packing p = make_packing(mask);
  p.index = to_device_without_waiting(p.index, device);
  p.cu_seqlens = to_device_without_waiting(p.cu_seqlens, device);
  return p;
}

torch::Tensor pack(const torch::Tensor& x, const Packing& packing) {
  return x.flatten(0, 1).index_select(0, packing.index);
}

torch::Tensor unpack(const torch::Tensor& x, const Packing& packing) {
  std::vector<int64_t> flat = x.sizes().vec(), shaped = flat;
  flat[0] = packing.rows * packing.length;
  shaped[0] = packing.length;
  shaped.insert(shaped.begin(), packing.rows);
  return torch::zeros(flat, x.options()).index_copy(0, packing.index, x).view(shaped);
}

}  // namespace ragmig::model
