// An alert: which rule, about which job or slot, the value seen and the threshold it crossed. It fires once
// when its condition has held long enough, and clears once when the condition is gone; both are recorded
// (the store's alerts table, as JSON) so that `ragmig status` and the report show what fired and when.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sched/job.h"

namespace ragmig::monitor {

struct Alert {
  std::string rule;        ///< stall | loss_not_finite | loss_exploding | slot_idle | memory_high | oom | crash_loop | deadline
  sched::JobId job = 0;    ///< 0: not about one job
  std::string slot;        ///< "": not about one slot
  double value = 0, threshold = 0;
  std::string message;     ///< one line for a person
  double for_s = 0;        ///< fires only once its condition has held this long

  /// Identifies the condition across samples: rule, job and slot.
  std::string key() const;
};

/// An alert firing or clearing at `at`.
struct AlertChange {
  Alert alert;
  bool firing = true;
  double at = 0;
  double since = 0;  ///< firing: when its condition began; cleared: when it fired
};

/// {"event": "alert", "state": "firing" | "cleared", "rule", "job", "slot", "value", "threshold", "message",
///  "at", "since"}: what the store, the exec hook and `ragmig status --json` carry.
nlohmann::json to_json(const AlertChange& change);
/// Inverse of to_json; throws DataError naming `where` and the key.
AlertChange alert_change_from_json(const nlohmann::json& j, const std::string& where);

/// The alerts still firing after these changes (oldest first), e.g. from the store's log.
std::vector<AlertChange> still_firing(const std::vector<AlertChange>& log);

}  // namespace ragmig::monitor
