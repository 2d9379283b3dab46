// The dense side of index works on plain row-major float matrices (no torch here), one row per vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ragmig::index {

struct FloatMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> data;  ///< rows * cols, row-major

  FloatMatrix() = default;
  FloatMatrix(int64_t r, int64_t c) : rows(r), cols(c), data(static_cast<size_t>(r * c), 0.0f) {}
  const float* row(int64_t i) const { return data.data() + i * cols; }
  float* row(int64_t i) { return data.data() + i * cols; }
};

}  // namespace ragmig::index
