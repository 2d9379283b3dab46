// Throughput-proportional split of a fixed global batch under per-replica bounds (see batch_balancer.h).
#include "train/batch_balancer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.h"

namespace ragmig::train {

std::vector<double> smooth_cost(const std::vector<double>& previous, const std::vector<int64_t>& sizes,
                                const std::vector<double>& seconds, double alpha) {
  RAGMIG_CHECK(sizes.size() == seconds.size() && (previous.empty() || previous.size() == sizes.size()));
  std::vector<double> out(sizes.size(), 0.0);
  for (size_t r = 0; r < sizes.size(); ++r) {
    const double now = sizes[r] > 0 && seconds[r] > 0 ? seconds[r] / static_cast<double>(sizes[r]) : 0;
    const double before = previous.empty() ? 0 : previous[r];
    out[r] = before <= 0 ? now : now <= 0 ? before : alpha * now + (1 - alpha) * before;
  }
  return out;
}

std::vector<int64_t> rebalance(const std::vector<int64_t>& sizes, const std::vector<double>& seconds, int64_t total,
                               int64_t lo, int64_t hi, double deadband) {
  const size_t n = sizes.size();
  RAGMIG_CHECK(n > 0 && seconds.size() == n);
  if (lo < 0 || lo > hi || lo * static_cast<int64_t>(n) > total || hi * static_cast<int64_t>(n) < total)
    throw ConfigError("parallel.min_batch_fraction: no split of " + std::to_string(total) + " samples over " +
                      std::to_string(n) + " replicas fits [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  if (deadband > 0 && std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) == total &&
      std::all_of(sizes.begin(), sizes.end(), [&](int64_t s) { return s >= lo && s <= hi; }) &&
      std::all_of(seconds.begin(), seconds.end(), [](double x) { return x > 0; }) && step_time_gap(seconds) < deadband)
    return sizes;
  // Throughput (samples per second); a replica without a measurement keeps the mean rate of the others.
  std::vector<double> rate(n, 0.0);
  double known = 0;
  int measured = 0;
  for (size_t r = 0; r < n; ++r)
    if (seconds[r] > 0 && sizes[r] > 0) {
      rate[r] = static_cast<double>(sizes[r]) / seconds[r];
      known += rate[r];
      ++measured;
    }
  for (size_t r = 0; r < n; ++r)
    if (rate[r] <= 0) rate[r] = measured ? known / measured : 1.0;

  // Water-filling: replicas whose share falls outside [lo, hi] are pinned to the bound, the rest share
  // what is left in proportion to their rates. Each pass pins at least one replica or ends.
  std::vector<double> share(n, 0.0);
  std::vector<bool> pinned(n, false);
  while (true) {
    double left = static_cast<double>(total), free_rate = 0;
    for (size_t r = 0; r < n; ++r) {
      if (pinned[r]) left -= share[r];
      else free_rate += rate[r];
    }
    bool changed = false;
    for (size_t r = 0; r < n; ++r) {
      if (pinned[r]) continue;
      share[r] = free_rate > 0 ? left * rate[r] / free_rate : 0;
      if (share[r] < static_cast<double>(lo) || share[r] > static_cast<double>(hi)) {
        share[r] = std::clamp(share[r], static_cast<double>(lo), static_cast<double>(hi));
        pinned[r] = changed = true;
        break;  // re-share among the others before pinning another
      }
    }
    if (!changed) break;
  }
  // Largest remainder: floors first, then one more sample to the largest fractions until the sum is met.
  std::vector<int64_t> out(n);
  for (size_t r = 0; r < n; ++r) out[r] = std::clamp(static_cast<int64_t>(std::floor(share[r] + 1e-9)), lo, hi);
  int64_t missing = total - std::accumulate(out.begin(), out.end(), int64_t{0});
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return share[a] - std::floor(share[a]) > share[b] - std::floor(share[b]);
  });
  for (size_t i = 0; missing != 0; i = (i + 1) % n) {
    const size_t r = order[i];
    if (missing > 0 && out[r] < hi) --missing, ++out[r];
    else if (missing < 0 && out[r] > lo) ++missing, --out[r];
  }
  return out;
}

double step_time_gap(const std::vector<double>& seconds) {
  if (seconds.empty()) return 0;
  const auto [lo, hi] = std::minmax_element(seconds.begin(), seconds.end());
  return *hi > 0 ? (*hi - *lo) / *hi : 0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace ragmig::train
