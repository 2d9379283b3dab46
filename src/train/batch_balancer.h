// Dynamic per-replica batch sizes: replicas on slower slices take fewer samples of the fixed global batch,
// so that every replica's compute time per step is about the same. Pure functions of measured times; the
// trainer feeds them medians over a window of steps, which the noise of a shared machine needs.
#pragma once

#include <cstdint>
#include <vector>

namespace ragmig::train {

/// Next per-replica sizes: proportional to each replica's measured throughput sizes[r] / seconds[r],
/// summing to `total`, each within [lo, hi] (largest-remainder rounding, ties to the lower rank). A replica
/// without a measurement (seconds <= 0) keeps its throughput share. Sizes stay as they are while the gap is
/// below `deadband` (no chasing of noise). Throws ConfigError when no split fits.
std::vector<int64_t> rebalance(const std::vector<int64_t>& sizes, const std::vector<double>& seconds, int64_t total,
                               int64_t lo, int64_t hi, double deadband = 0.0);

/// Seconds per sample smoothed over windows: alpha * seconds[r] / sizes[r] + (1 - alpha) * previous[r]
/// (previous empty or 0 = no history). Load on a shared machine comes and goes; one window must not swing
/// the split on its own.
std::vector<double> smooth_cost(const std::vector<double>& previous, const std::vector<int64_t>& sizes,
                                const std::vector<double>& seconds, double alpha);

/// (slowest - fastest) / slowest: 0 when all replicas take the same time.
double step_time_gap(const std::vector<double>& seconds);

/// The median (mean of the middle two for an even count); 0 for none.
double median(std::vector<double> values);

}  // namespace ragmig::train
