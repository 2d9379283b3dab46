// The alert rules: plain functions from one Observation and the thresholds to the conditions that hold now.
// How long a condition must hold before it fires, and firing once and clearing once, are AlertTracker's.
#pragma once

#include <string>
#include <vector>

#include "monitor/alert.h"
#include "monitor/observation.h"

namespace ragmig::monitor {

/// [alerts] in a sweep file or in `ragmig run --alerts FILE` (alert_config.h). The defaults suit training
/// jobs of minutes to days.
struct AlertThresholds {
  std::string exec;                 ///< a command run with each alert change as JSON on stdin ("" none)
  double stall_factor = 10;         ///< stall: no progress for this many times the job's usual progress interval
  double stall_min_s = 120;         ///< ... and never sooner than this
  double start_timeout_s = 900;     ///< stall: no progress this long after an attempt started
  double loss_exploding_factor = 10;  ///< loss_exploding: loss above this many times the attempt's lowest ...
  double loss_exploding_min_rise = 1.0;  ///< ... and at least this much above it (nats, as ragmig's losses are
                                         ///< cross-entropies: a fine-tune near 0.005 reads 0.1 on a harder batch)
  int64_t loss_exploding_min_events = 3;  ///< ... once the attempt has reported this many losses
  double idle_utilization = 0.10;   ///< slot_idle: a slot used under this share while jobs wait ...
  double idle_s = 300;              ///< ... for this long
  double memory_fraction = 0.95;    ///< memory_high: a slot (or the host) with this share of its memory used
  double memory_for_s = 30;         ///< ... for this long
  int64_t crash_loop_failures = 3;  ///< crash_loop: this many failed or lost attempts ...
  double crash_loop_window_s = 3600;  ///< ... within this long, and no progress since the last
  double oom_window_s = 3600;       ///< oom: an attempt ran out of memory this recently, and no progress since
  double deadline = 0;              ///< deadline: Unix time the queue must be done by (0: no deadline)
  double forget_after_s = 600;      ///< a job that ended is watched this long more (its NaN, OOM, crash alerts)
  double interval_s = 5;            ///< seconds between the monitor's samples (and /metrics' refreshes)
};

/// Every condition that holds in `observation`, at most one per rule, job and slot.
std::vector<Alert> evaluate_rules(const Observation& observation, const AlertThresholds& thresholds);

/// The names of the rules, in a stable order (for /metrics' zero series and for docs).
const std::vector<std::string>& rule_names();

}  // namespace ragmig::monitor
