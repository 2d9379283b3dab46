// Each step's loss, kept where it was computed until the trainer reports it (a progress event, a checkpoint,
// an evaluation, the end). Reading a value from a GPU waits until the device has run everything queued, so a
// read every step would leave the GPU idle while the host queues the next step; read here in one copy per
// report. On CPU a read costs nothing and the values and their order are the same.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace ragmig::train {

class StepLosses {
 public:
  /// The loss of `step`: a 0-dim float64 tensor on any device (train/grad_step.h returns them so).
  void add(int64_t step, torch::Tensor loss);

  /// (step, loss) of every loss added since the last read, in the order added; one copy to the host.
  std::vector<std::pair<int64_t, double>> read();

 private:
  std::vector<int64_t> steps_;
  std::vector<torch::Tensor> losses_;
};

}  // namespace ragmig::train
