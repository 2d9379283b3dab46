#include "model/rotary.h"

namespace ragmig::model {

RotaryTables rotary_tables(int64_t length, int64_t head_dim, double theta, torch::Device device) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
  // HF: 1 / base ** (arange(0, dim, 2) / dim) in float32, then positions[:, None] * inv_freq.
  const auto exponents = torch::arange(0, head_dim, 2, f32) / static_cast<double>(head_dim);
  const auto inv_freq = torch::pow(theta, exponents).reciprocal();
  const auto freqs = torch::arange(length, f32).unsqueeze(1) * inv_freq.unsqueeze(0);
  const auto angles = torch::cat({freqs, freqs}, -1);
  return {angles.cos(), angles.sin()};
}

torch::Tensor apply_rotary(const torch::Tensor& x, const RotaryTables& tables) {
  const auto xf = x.to(torch::kFloat);
  const int64_t half = xf.size(-1) / 2;
  const auto rotated = torch::cat({-xf.narrow(-1, half, half), xf.narrow(-1, 0, half)}, -1);
  return (xf * tables.cos + rotated * tables.sin).to(x.scalar_type());
}

RotaryTables packed_rotary_tables(const RotaryTables& tables, const Packing& packing) {
  const auto columns = torch::remainder(packing.index, packing.length).to(tables.cos.device());
  return {tables.cos.index_select(0, columns).unsqueeze(1), tables.sin.index_select(0, columns).unsqueeze(1)};
}

}  // namespace ragmig::model
