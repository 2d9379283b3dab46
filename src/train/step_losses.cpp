// Step losses read in one copy (see step_losses.h).
#include "train/step_losses.h"

namespace ragmig::train {

void StepLosses::add(int64_t step, torch::Tensor loss) {
  steps_.push_back(step);
  losses_.push_back(std::move(loss));
}

std::vector<std::pair<int64_t, double>> StepLosses::read() {
  std::vector<std::pair<int64_t, double>> out;
  if (steps_.empty()) return out;
  const torch::Tensor host = torch::stack(losses_).to(torch::kCPU, torch::kDouble).contiguous();
  const double* values = host.data_ptr<double>();
  for (size_t i = 0; i < steps_.size(); ++i) out.emplace_back(steps_[i], values[i]);
  steps_.clear();
  losses_.clear();
  return out;
}

}  // namespace ragmig::train
