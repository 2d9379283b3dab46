// Asynchronous successive halving (Li et al., "A System for Massively Parallel Hyperparameter Tuning",
// MLSys 2020), the stopping variant of Ray Tune's ASHAScheduler: trials run without pausing; at each rung a
// trial reports its metric and goes on only if it is in the top 1/eta of what was recorded there before it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ragmig::hpo {

struct AshaConfig {
  int64_t min_steps = 0;        ///< first rung; 0 = no early stopping
  double reduction_factor = 3;  ///< eta, > 1
  int64_t max_steps = 0;        ///< the trials' full length; rungs lie strictly below it
  bool maximize = true;
};

/// min_steps * eta^k (rounded to the nearest integer) for k = 0, 1, ... while < max_steps, strictly
/// increasing (a rounding that repeats a step is skipped); empty when min_steps == 0 or min_steps >=
/// max_steps. ConfigError for eta <= 1 (or not finite) or negative steps.
std::vector<int64_t> rung_steps(const AshaConfig& config);

/// numpy.percentile's default (linear interpolation between closest ranks), q in [0, 1]; values non-empty.
/// Infinities are ordered like numbers: interpolating next to -inf gives -inf, next to +inf gives +inf.
double quantile(std::vector<double> values, double q);

enum class AshaAction { Continue, Stop };

std::string to_string(AshaAction action);  // "continue" | "stop"

/// No earlier value at this rung -> Continue. Otherwise (maximize) cutoff = quantile(earlier, 1 - 1/eta) and
/// Continue iff value >= cutoff; (minimize) cutoff = quantile(earlier, 1/eta) and Continue iff value <= cutoff.
/// NaN is the worst value: a NaN report stops unless it is the first, and NaN in `earlier` counts as -inf
/// (maximize) or +inf (minimize), so it never raises the bar.
AshaAction asha_decide(const std::vector<double>& earlier, double value, double eta, bool maximize);

/// Bookkeeping over asha_decide, replayable: the same reports in the same order give the same decisions,
/// so a restarted driver rebuilds its state from the reports it logged.
class Asha {
 public:
  /// Validates through rung_steps (ConfigError).
  explicit Asha(AshaConfig config);

  const std::vector<int64_t>& rungs() const { return rungs_; }

  /// `trial` reports `value` from an evaluation at step `step`. The report counts for the highest rung <=
  /// step (a worker evaluates at the rung steps; a resumed one may report a rung late), as in Ray Tune:
  /// lower rungs it skipped stay unreported. Returns the decision, and a Stop is final: a stopped trial
  /// returns Stop and records nothing. A report below the first rung, or for a rung this trial already
  /// reported, records nothing and returns the trial's current state (Continue unless stopped).
  AshaAction report(const std::string& trial, int64_t step, double value);

  bool stopped(const std::string& trial) const { return stopped_.count(trial) > 0; }

  /// rung step -> (trial -> value) as recorded.
  const std::map<int64_t, std::map<std::string, double>>& recorded() const { return recorded_; }

 private:
  AshaConfig config_;
  std::vector<int64_t> rungs_;
  std::map<int64_t, std::map<std::string, double>> recorded_;
  std::map<int64_t, std::vector<double>> in_order_;  // each rung's values in report order, for asha_decide
  std::set<std::string> stopped_;
};

}  // namespace ragmig::hpo
