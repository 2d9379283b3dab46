// The metrics of metrics.h.
#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace ragmig::sim {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

Metrics summarize(const std::vector<JobOutcome>& outcomes, double busy_slice_seconds, int capacity_slices) {
  Metrics m;
  m.jobs = outcomes.size();
  if (outcomes.empty()) return m;
  std::vector<double> jct;
  double first = outcomes.front().arrival, last = outcomes.front().finished, queued = 0, sum = 0;
  for (const auto& o : outcomes) {
    jct.push_back(o.finished - o.arrival);
    sum += jct.back();
    queued += o.queued_s;
    first = std::min(first, o.arrival);
    last = std::max(last, o.finished);
  }
  const double n = static_cast<double>(outcomes.size());
  m.avg_jct = sum / n;
  m.avg_queueing = queued / n;
  std::sort(jct.begin(), jct.end());
  m.median_jct = quantile(jct, 0.5);
  m.p95_jct = quantile(jct, 0.95);
  m.p99_jct = quantile(jct, 0.99);
  m.makespan = last - first;
  if (m.makespan > 0 && capacity_slices > 0)
    m.utilization = busy_slice_seconds / (static_cast<double>(capacity_slices) * m.makespan);
  return m;
}

}  // namespace ragmig::sim
