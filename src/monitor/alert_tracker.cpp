// Firing alerts keep their first message, value and start time; only their clearing is reported later.
#include "monitor/alert_tracker.h"

#include <set>

namespace ragmig::monitor {

void AlertTracker::restore(const std::vector<AlertChange>& firing) {
  for (const auto& c : firing) firing_[c.alert.key()] = c;
}

std::vector<AlertChange> AlertTracker::update(const std::vector<Alert>& conditions, double now) {
  std::set<std::string> present;
  std::vector<AlertChange> fired;
  for (const auto& a : conditions) {
    const std::string key = a.key();
    if (!present.insert(key).second) continue;
    if (firing_.count(key)) continue;
    const double since = pending_since_.emplace(key, now).first->second;
    if (now - since < a.for_s) continue;
    AlertChange c{a, true, now, since};
    firing_[key] = c;
    pending_since_.erase(key);
    fired.push_back(std::move(c));
  }
  std::vector<AlertChange> out;
  for (auto it = firing_.begin(); it != firing_.end();) {
    if (present.count(it->first)) {
      ++it;
      continue;
    }
    AlertChange c = it->second;
    c.firing = false;
    c.since = it->second.at;
    c.at = now;
    out.push_back(std::move(c));
    it = firing_.erase(it);
  }
  for (auto it = pending_since_.begin(); it != pending_since_.end();)
    it = present.count(it->first) ? std::next(it) : pending_since_.erase(it);
  out.insert(out.end(), fired.begin(), fired.end());
  return out;
}

}  // namespace ragmig::monitor
