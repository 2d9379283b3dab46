// Training jobs' FLOP rate from their progress (see work_rate.h).
#include "sched/work_rate.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ragmig::sched {

void ProgressWindow::add(int64_t step, double time, int64_t batch_size) {
  if (!open_ || batch_size != batch_size_ || step <= last_step_) {
    open_ = true;
    first_step_ = last_step_ = step;
    first_time_ = last_time_ = time;
    batch_size_ = batch_size;
    return;
  }
  last_step_ = step;
  last_time_ = time;
}

std::optional<double> ProgressWindow::rate(double step_flops, int64_t configured_batch, double speed) const {
  const double seconds = (last_time_ - first_time_) * speed;
  if (!open_ || last_step_ <= first_step_ || !(seconds > 0) || configured_batch <= 0 || !(step_flops > 0))
    return std::nullopt;
  const double flops = step_flops * static_cast<double>(batch_size_) / static_cast<double>(configured_batch) *
                       (static_cast<double>(last_step_) - static_cast<double>(first_step_));  // no int64 overflow
  return flops / seconds;
}

std::optional<double> median_rate(std::vector<double> rates) {
  if (rates.empty()) return std::nullopt;
  const auto middle = rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2);
  std::nth_element(rates.begin(), middle, rates.end());
  if (rates.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(rates.begin(), middle)) / 2;
}

double unmeasured_rate(std::vector<double> job_flops) {
  const auto median = median_rate(std::move(job_flops));
  return median ? *median / kUnmeasuredMedianJobSeconds : 0;
}

bool reprice(double applied, double measured) { return std::abs(measured / applied - 1) > 0.1; }

}  // namespace ragmig::sched
