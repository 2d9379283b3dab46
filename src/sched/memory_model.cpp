#include "sched/memory_model.h"

#include <algorithm>
#include <cmath>

namespace ragmig::sched {

MemoryModel prior_memory(const Need& need, int64_t batch_size) {
  const auto m = static_cast<double>(need.min_memory_mb);
  if (batch_size <= 0) return {m, 0, false};
  return {kPriorFixedShare * m, (1 - kPriorFixedShare) * m / static_cast<double>(batch_size), false};
}

MemoryModel learned_memory(double peak_mb, double state_mb, int64_t batch_size) {
  if (batch_size <= 0 || !std::isfinite(peak_mb) || !(state_mb >= 0) || !(peak_mb >= state_mb)) return {};
  return {state_mb, (peak_mb - state_mb) / static_cast<double>(batch_size), true};
}

MemoryModel after_out_of_memory(MemoryModel model, int64_t slot_memory_mb, int64_t holds) {
  if (largest_batch_within(model, slot_memory_mb, 1, holds + 1, 1) <= holds) return model;
  const auto memory = static_cast<double>(slot_memory_mb);
  model.fixed_mb = std::min(model.fixed_mb, memory);
  // Between what `holds` and `holds + 1` samples need: the slot holds `holds` and no more.
  model.per_sample_mb = (memory - model.fixed_mb) / (static_cast<double>(std::max<int64_t>(holds, 0)) + 0.5);
  return model;
}

double memory_at(const MemoryModel& model, int64_t batch) {
  return model.fixed_mb + model.per_sample_mb * static_cast<double>(batch);
}

int64_t largest_batch_within(const MemoryModel& model, int64_t memory_mb, int64_t least, int64_t most, int replicas) {
  const int64_t r = std::max(replicas, 1);
  const auto room = static_cast<double>(memory_mb) - model.fixed_mb;
  if (!(room >= 0) || most < least) return 0;  // also a NaN
  int64_t b = most;
  // In double first: a tiny per-sample figure from a worker's report must not overflow the cast.
  if (model.per_sample_mb > 0)
    b = static_cast<int64_t>(std::min(static_cast<double>(most), std::floor(room / model.per_sample_mb)));
  b -= b % r;
  return b >= least && b > 0 ? b : 0;
}

}  // namespace ragmig::sched
