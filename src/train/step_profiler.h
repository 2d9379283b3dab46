// A profile of a few training steps (train.profile_trace): LibTorch's Kineto profiler over the steps
// [first, first + count) — CPU operators and, on a GPU, every kernel with its duration — saved as a Chrome
// trace (chrome://tracing or Perfetto open it; bench/train/trace_table.py sums it by kind of kernel and says
// how long the GPU sat idle).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace ragmig::train {

class StepProfiler {
 public:
  /// `path` empty: does nothing. count >= 1 (train.profile_steps is checked with the config). Throws
  /// ConfigError where this LibTorch has no Kineto profiler.
  StepProfiler(std::string path, int64_t first, int64_t count, torch::Device device);
  ~StepProfiler();
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;

  /// Call with each step's number before the step's work: starts recording at `first`.
  void before_step(int64_t step);
  /// Call after the step's work: at first + count - 1, waits for the device, stops and writes the trace.
  /// Returns true when it wrote it.
  bool after_step(int64_t step);

 private:
  void stop(bool save);

  std::string path_;
  int64_t first_, last_;
  torch::Device device_;
  bool recording_ = false;
};

}  // namespace ragmig::train
