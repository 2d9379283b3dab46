// ASHA's rule as a pure function of the values recorded at a rung, and the per-rung bookkeeping around it.
// Only the order of reports matters, never time, so the decisions can be replayed from a log.
#include "hpo/asha.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace ragmig::hpo {

std::vector<int64_t> rung_steps(const AshaConfig& config) {
  const double eta = config.reduction_factor;
  if (!std::isfinite(eta) || eta <= 1)
    throw ConfigError(fmt::format("asha: reduction_factor must be a number > 1, got {}", eta));
  if (config.min_steps < 0 || config.max_steps < 0)
    throw ConfigError(fmt::format("asha: steps must be >= 0, got min_steps = {}, max_steps = {}", config.min_steps,
                                  config.max_steps));
  std::vector<int64_t> rungs;
  if (config.min_steps == 0) return rungs;
  // In doubles, so that a large eta cannot overflow before the loop sees it pass max_steps.
  for (double step = static_cast<double>(config.min_steps); step < static_cast<double>(config.max_steps); step *= eta) {
    const auto rounded = static_cast<int64_t>(std::llround(step));
    if (rounded >= config.max_steps) break;
    if (rungs.empty() || rounded > rungs.back()) rungs.push_back(rounded);
  }
  return rungs;
}

double quantile(std::vector<double> values, double q) {
  RAGMIG_CHECK(!values.empty(), "quantile of no values");
  RAGMIG_CHECK(q >= 0 && q <= 1, fmt::format("quantile q = {} outside [0, 1]", q));
  std::sort(values.begin(), values.end());
  const double h = static_cast<double>(values.size() - 1) * q;
  const auto lo = static_cast<size_t>(std::floor(h));
  const double t = h - static_cast<double>(lo);
  // t == 0 must not touch values[lo + 1]: inf * 0 would be NaN.
  if (t == 0 || lo + 1 >= values.size()) return values[lo];
  const double a = values[lo], b = values[lo + 1];
  // Sorted, so an infinite a is -inf and an infinite b is +inf; the interpolation takes the infinity
  // (the formula below would give NaN for -inf + inf).
  if (std::isinf(a)) return a;
  if (std::isinf(b)) return b;
  // numpy's _lerp: from the nearer end, so that t close to 1 lands exactly on b.
  const double d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

std::string to_string(AshaAction action) {
  return action == AshaAction::Continue ? "continue" : "stop";
}

AshaAction asha_decide(const std::vector<double>& earlier, double value, double eta, bool maximize) {
  if (earlier.empty()) return AshaAction::Continue;
  if (std::isnan(value)) return AshaAction::Stop;
  const double worst = maximize ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  std::vector<double> values;
  values.reserve(earlier.size());
  for (double v : earlier) values.push_back(std::isnan(v) ? worst : v);
  if (maximize) return value >= quantile(std::move(values), 1 - 1 / eta) ? AshaAction::Continue : AshaAction::Stop;
  return value <= quantile(std::move(values), 1 / eta) ? AshaAction::Continue : AshaAction::Stop;
}

Asha::Asha(AshaConfig config) : config_(config), rungs_(rung_steps(config)) {}

AshaAction Asha::report(const std::string& trial, int64_t step, double value) {
  if (stopped(trial)) return AshaAction::Stop;
  const auto above = std::upper_bound(rungs_.begin(), rungs_.end(), step);
  if (above == rungs_.begin()) return AshaAction::Continue;  // below the first rung (or no rungs)
  const int64_t rung = *std::prev(above);
  auto& at_rung = recorded_[rung];
  if (at_rung.count(trial)) return AshaAction::Continue;
  auto& earlier = in_order_[rung];
  const AshaAction action = asha_decide(earlier, value, config_.reduction_factor, config_.maximize);
  at_rung[trial] = value;
  earlier.push_back(value);
  if (action == AshaAction::Stop) stopped_.insert(trial);
  return action;
}

}  // namespace ragmig::hpo
