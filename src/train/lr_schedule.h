// Learning rate with linear warm-up and linear decay: a pure function of the step, so resuming needs no
// schedule state. Unlike Hugging Face's get_linear_schedule_with_warmup, no step runs at LR 0: the first
// step gets peak/warmup and the last one peak/(total-warmup+1).
#pragma once

#include <algorithm>
#include <cstdint>

namespace ragmig::train {

/// LR for optimiser step `step` (1-based) of `total`, rising to `peak` at step `warmup`, then falling.
inline double linear_warmup_decay_lr(int64_t step, int64_t total, int64_t warmup, double peak) {
  if (step <= warmup) return peak * static_cast<double>(step) / static_cast<double>(warmup);
  const double left = static_cast<double>(std::max<int64_t>(total - step + 1, 0));
  return peak * left / static_cast<double>(std::max<int64_t>(total - warmup, 1));
}

}  // namespace ragmig::train
