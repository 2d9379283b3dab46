// Kineto around a window of steps (see step_profiler.h).
#include "train/step_profiler.h"

#include "core/error.h"
#include "train/torch_compat.h"

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/autograd/profiler_kineto.h>
#endif

namespace ragmig::train {

StepProfiler::StepProfiler(std::string path, int64_t first, int64_t count, torch::Device device)
    : path_(std::move(path)), first_(first), last_(first + count - 1), device_(device) {
#if TORCH_VERSION_MAJOR < 2
  if (!path_.empty()) throw ConfigError("config key 'train.profile_trace': this LibTorch (1.x) has no Kineto profiler");
#endif
}

StepProfiler::~StepProfiler() {
  try {
    stop(false);
  } catch (...) {  // a profile left unsaved is not worth a crash
  }
}

void StepProfiler::before_step(int64_t step) {
  if (path_.empty() || recording_ || step != first_) return;
#if TORCH_VERSION_MAJOR >= 2
  namespace p = torch::profiler::impl;
  std::set<p::ActivityType> activities{p::ActivityType::CPU};
  if (device_.is_cuda()) activities.insert(p::ActivityType::CUDA);
  const p::ProfilerConfig config(p::ProfilerState::KINETO, /*report_input_shapes=*/true);
  finish_device_work(device_);  // the steps before stay out of the window
  torch::autograd::profiler::prepareProfiler(config, activities);
  torch::autograd::profiler::enableProfiler(config, activities);
  recording_ = true;
#endif
}

bool StepProfiler::after_step(int64_t step) {
  if (!recording_ || step < last_) return false;
  stop(true);
  return true;
}

void StepProfiler::stop(bool save) {
  if (!recording_) return;
  recording_ = false;
#if TORCH_VERSION_MAJOR >= 2
  finish_device_work(device_);  // every kernel of the window has run before the profiler closes
  auto result = torch::autograd::profiler::disableProfiler();
  if (save && result) result->save(path_);
#else
  (void)save;
#endif
}

}  // namespace ragmig::train
