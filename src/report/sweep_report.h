// Gathers what the report of a sweep shows from the sweep driver and the scheduler's store: attempts as
// Gantt spans, slot allocation over time, loss curves from the workers' events, a ranked leaderboard and
// headline figures. Rendering stays in html_report.h; this file decides what the figures mean.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hpo/sweep_driver.h"
#include "report/report_data.h"
#include "sched/store.h"

namespace ragmig::report {

struct SweepReportInput {
  std::vector<std::string> slots;                                 ///< slot ids on offer, in order
  std::vector<std::pair<double, double>> measured;                ///< (unix time, mean utilisation 0..1)
  std::vector<std::pair<std::string, std::string>> environment;   ///< host, slots, GPUs, policy...
  double now = 0;                                                 ///< unix time of this report
  std::string generated_at;                                       ///< human form of `now`
};

/// Done trials first (best metric first), then those still running or queued, then the ones ASHA stopped
/// (furthest rung first, then its value), then failed and cancelled ones.
std::vector<LeaderRow> leaderboard(const std::vector<hpo::TrialStatus>& trials);

ReportData sweep_report(const hpo::SweepDriver& driver, sched::Store& store, const SweepReportInput& input);

}  // namespace ragmig::report
