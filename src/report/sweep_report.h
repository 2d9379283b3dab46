// Gathers what the report of a sweep shows from the sweep driver and the scheduler's store: attempts as
// Gantt spans, slot allocation over time, loss curves from the workers' events, a ranked leaderboard and
// headline figures. Rendering stays in html_report.h; this file decides what the figures mean.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hpo/sweep_driver.h"
#include "report/report_data.h"
#include "sched/store.h"

namespace ragmig::report {

struct SweepReportInput {
  std::vector<std::string> slots;                                 ///< slot ids on offer, in order
  std::map<std::string, int> slot_compute;                        ///< compute slices per slot id (absent: 1)
  int capacity = 0;                                               ///< compute slices of the machine (0: one per slot)
  std::vector<std::pair<double, double>> measured;                ///< (unix time, mean utilisation 0..1)
  std::vector<std::pair<std::string, std::string>> environment;   ///< host, slots, GPUs, policy...
  double now = 0;                                                 ///< unix time of this report
  std::string generated_at;                                       ///< human form of `now`
};

/// The share of the machine's compute that attempts held over [0, horizon_s], as a step function: each span
/// weighs its slot's compute slices (`compute`; 1 when absent), over `capacity` slices. A MIG instance of
/// 3g counts three sevenths of its GPU, so instances of different sizes, and a layout that changes while the
/// sweep runs, are counted for what they are.
Series allocation(const std::vector<Span>& spans, const std::map<std::string, int>& compute, int capacity, double horizon_s);

/// Done trials and baselines first (best metric first; a tie keeps trials before baselines), then those
/// still running or queued, then the trials ASHA stopped (furthest rung first, then its value), then failed
/// and cancelled ones.
std::vector<LeaderRow> leaderboard(const std::vector<hpo::TrialStatus>& trials,
                                   const std::vector<hpo::BaselineStatus>& baselines = {});

ReportData sweep_report(const hpo::SweepDriver& driver, sched::Store& store, const SweepReportInput& input);

}  // namespace ragmig::report
