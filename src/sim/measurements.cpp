// Measuring seconds per iteration from a real run's store (see measurements.h).
#include "sim/measurements.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "gpu/inventory.h"
#include "sched/job_event.h"

namespace ragmig::sim {
namespace {

// The steps an attempt's events name: the one it started from (its start event), its last checkpoint and the
// last it reached.
struct Steps {
  std::optional<int64_t> from, reached, checkpoint;
};

Steps steps_of(const std::vector<std::string>& events) {
  Steps s;
  for (const auto& line : events) {
    const sched::JobEvent e = sched::read_job_event(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
    if (!e.step) continue;
    const int64_t n = *e.step;
    const std::string& kind = e.kind;
    if (kind == "start" && !s.from) s.from = n;
    if (kind == "checkpoint") s.checkpoint = n;
    if (kind == "progress" || kind == "done" || kind == "preempted") s.reached = std::max(s.reached.value_or(n), n);
  }
  return s;
}

}  // namespace

ThroughputTable measure_throughputs(sched::Store& store) {
  std::map<std::string, std::string> profile_of;
  for (const auto& s : store.slots()) profile_of[s.id] = s.profile;
  // A slot the table no longer lists (a MIG instance re-partitioned away) is named by its id.
  const auto profile = [&](const std::string& slot) -> std::string {
    if (const auto p = profile_of.find(slot); p != profile_of.end()) return p->second;
    if (slot.rfind("cpu", 0) == 0) return "cpu";
    return gpu::mig_slot_profile(slot).value_or(slot);
  };
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> sums;  // -> (seconds, iterations)
  for (const auto& job : store.jobs(/*active_only=*/false)) {
    if (job.state != sched::JobState::Done) continue;
    const auto attempts = store.attempts(job.id);
    if (attempts.empty() || attempts.back().slots.empty()) continue;
    if (job.step <= 0) {  // one unit of work: every attempt's time, on the slot it finished on
      double seconds = 0;
      for (const auto& a : attempts) seconds += a.ended_at - a.started_at;
      auto& [t, n] = sums[{job.spec.name, profile(attempts.back().slots.front())}];
      t += seconds;
      n += 1;
      continue;
    }
    // Each attempt on its own slot: the steps it made (from where it started: its start event, else the last
    // checkpoint before it) over its time.
    int64_t resume = 0;
    for (const auto& a : attempts) {
      const Steps s = steps_of(store.attempt_events(job.id, a.id));
      const int64_t from = s.from.value_or(resume);
      if (s.checkpoint) resume = *s.checkpoint;
      if (a.slots.empty() || !s.reached || *s.reached <= from) continue;
      auto& [t, n] = sums[{job.spec.name, profile(a.slots.front())}];
      t += a.ended_at - a.started_at;
      n += static_cast<double>(*s.reached - from);
    }
  }
  ThroughputTable table;
  for (const auto& [key, value] : sums)
    if (value.first > 0 && value.second > 0) table[key.first][key.second] = value.first / value.second;
  return table;
}

}  // namespace ragmig::sim
