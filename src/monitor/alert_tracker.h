// Turns the conditions the rules see in each sample into alert changes: a condition fires once it has held
// for its alert's for_s, and clears once when a sample no longer shows it. Only the changes are reported,
// so an alert reaches the store, the log and the exec hook once per episode however often it is sampled.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "monitor/alert.h"

namespace ragmig::monitor {

class AlertTracker {
 public:
  /// Alerts still firing when a previous scheduler stopped (the store's log): they clear when the next
  /// samples do not show them, and do not fire a second time if they do.
  void restore(const std::vector<AlertChange>& firing);
  /// The changes this sample brings, cleared ones first.
  std::vector<AlertChange> update(const std::vector<Alert>& conditions, double now);
  /// What is firing now, by key.
  const std::map<std::string, AlertChange>& firing() const { return firing_; }

 private:
  std::map<std::string, double> pending_since_;
  std::map<std::string, AlertChange> firing_;
};

}  // namespace ragmig::monitor
