// How simulated runs are shown: one table with a row per policy, the same as JSON (a list of objects), and
// the timeline of slot occupancy as CSV for the report's Gantt chart.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/simulation.h"

namespace ragmig::sim {

/// A fixed-width table, one row per result; times in hours when the median JCT is over an hour, else in
/// seconds (the unit is in the header).
std::string format_table(const std::vector<SimResult>& results);
/// [{"policy", "jobs", "unplaceable", "avg_jct", "median_jct", "p95_jct", "p99_jct", "makespan",
///   "avg_queueing", "utilization", "preemptions", "repartitions", "steps", "wall_s"}, ...]; times in seconds.
nlohmann::json to_json(const std::vector<SimResult>& results);
/// `policy,slot,profile,job,start,end,outcome` rows, one per attempt per slot and per re-partition.
std::string format_timeline_csv(const std::vector<SimResult>& results);

}  // namespace ragmig::sim
