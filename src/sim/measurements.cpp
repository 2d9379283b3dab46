// Measuring seconds per iteration from a real run's store (see measurements.h).
#include "sim/measurements.h"

#include <map>

namespace ragmig::sim {

ThroughputTable measure_throughputs(sched::Store& store) {
  std::map<std::string, std::string> profile_of;
  for (const auto& s : store.slots()) profile_of[s.id] = s.profile;
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> sums;  // -> (seconds, iterations)
  for (const auto& job : store.jobs(/*active_only=*/false)) {
    if (job.state != sched::JobState::Done) continue;
    const auto attempts = store.attempts(job.id);
    if (attempts.empty() || attempts.back().slots.empty()) continue;
    double seconds = 0;
    for (const auto& a : attempts) seconds += a.ended_at - a.started_at;
    const std::string& slot = attempts.back().slots.front();
    const auto p = profile_of.find(slot);
    const std::string profile = p != profile_of.end() ? p->second : slot.rfind("cpu", 0) == 0 ? "cpu" : slot;
    auto& [t, n] = sums[{job.spec.name, profile}];
    t += seconds;
    n += job.step > 0 ? static_cast<double>(job.step) : 1.0;
  }
  ThroughputTable table;
  for (const auto& [key, value] : sums)
    if (value.first > 0 && value.second > 0) table[key.first][key.second] = value.first / value.second;
  return table;
}

}  // namespace ragmig::sim
