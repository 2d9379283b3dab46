// Formatting of results (see report.h).
#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>

namespace ragmig::sim {

std::string format_table(const std::vector<SimResult>& results) {
  double median = 0;
  for (const auto& r : results) median = std::max(median, r.metrics.median_jct);
  const bool hours = median > 3600;
  const double unit = hours ? 3600.0 : 1.0;
  const char* u = hours ? "h" : "s";
  std::string out = fmt::format("{:<40} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>8} {:>7} {:>7} {:>7}\n", "policy",
                                "jobs", fmt::format("avg({})", u), fmt::format("median({})", u), fmt::format("p95({})", u),
                                fmt::format("p99({})", u), fmt::format("span({})", u), fmt::format("queue({})", u),
                                "util", "preempt", "moved", "repart", "wall(s)");
  for (const auto& r : results) {
    const Metrics& m = r.metrics;
    out += fmt::format("{:<40} {:>6} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>5.1f}% {:>8} {:>7} {:>7} {:>7.2f}\n",
                       r.policy, m.jobs, m.avg_jct / unit, m.median_jct / unit, m.p95_jct / unit, m.p99_jct / unit,
                       m.makespan / unit, m.avg_queueing / unit, 100 * m.utilization, r.preemptions, r.migrations, r.repartitions,
                       r.wall_s);
  }
  return out;
}

nlohmann::json to_json(const std::vector<SimResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : results) {
    const Metrics& m = r.metrics;
    out.push_back({{"policy", r.policy},
                   {"jobs", m.jobs},
                   {"unplaceable", r.unplaceable},
                   {"avg_jct", m.avg_jct},
                   {"median_jct", m.median_jct},
                   {"p95_jct", m.p95_jct},
                   {"p99_jct", m.p99_jct},
                   {"makespan", m.makespan},
                   {"avg_queueing", m.avg_queueing},
                   {"utilization", m.utilization},
                   {"preemptions", r.preemptions},
                   {"migrations", r.migrations},
                   {"repartitions", r.repartitions},
                   {"steps", r.steps},
                   {"wall_s", r.wall_s}});
  }
  return out;
}

std::string format_timeline_csv(const std::vector<SimResult>& results) {
  std::string out = "policy,slot,profile,job,start,end,outcome\n";
  for (const auto& r : results)
    for (const auto& o : r.timeline)
      out += fmt::format("\"{}\",{},{},{},{},{},{}\n", r.policy, o.slot, o.profile, o.job, o.start, o.end, o.outcome);
  return out;
}

}  // namespace ragmig::sim
