// Packing and unpacking (see unpad.h). Both directions are one index_select / index_copy, whose gradients are
// each other: no atomics (the indices are distinct), so results stay deterministic on CPU and GPU.
#include "model/unpad.h"

#include <algorithm>

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
  return packing_on(make_packing(mask), device);
}

Packing packing_on(const Packing& packing, const torch::Device& device) {
  Packing p = packing;
  p.index = to_device_without_waiting(p.index, device);
  p.cu_seqlens = to_device_without_waiting(p.cu_seqlens, device);
  return p;
}

Packing join_packings(const Packing& a, const Packing& b) {
  Packing p;
  p.rows = a.rows + b.rows;
  p.length = std::max(a.length, b.length);
  // A position row * L + column of a grid L wide moves to (row + first_row) * p.length + column.
  const auto regrid = [&](const torch::Tensor& index, int64_t length, int64_t first_row) {
    if (length == 0) return index;  // no tokens
    return index + index.div(length, "floor") * (p.length - length) + first_row * p.length;
  };
  p.index = torch::cat({regrid(a.index, a.length, 0), regrid(b.index, b.length, a.rows)});
  p.cu_seqlens = torch::cat({a.cu_seqlens, b.cu_seqlens.narrow(0, 1, b.rows) + a.index.size(0)});
  return p;
}

PackedPair make_packed_pair(const torch::Tensor& mask_a, const torch::Tensor& mask_b, const torch::Device& device) {
  const Packing a = make_packing(mask_a), b = make_packing(mask_b);
  return {packing_on(a, device), packing_on(b, device), packing_on(join_packings(a, b), device)};
}

torch::Tensor pack_pair(const torch::Tensor& x_a, const torch::Tensor& x_b, const PackedPair& pair) {
  return torch::cat({pack(x_a, pair.a), pack(x_b, pair.b)});
}

std::pair<torch::Tensor, torch::Tensor> unpack_pair(const torch::Tensor& x, const PackedPair& pair) {
  const int64_t tokens_a = pair.a.index.size(0);
  return {unpack(x.narrow(0, 0, tokens_a), pair.a), unpack(x.narrow(0, tokens_a, x.size(0) - tokens_a), pair.b)};
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
