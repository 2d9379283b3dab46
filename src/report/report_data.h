// What a sweep report shows, already gathered: the schedule as spans on slots, utilisation and loss series,
// the ranked leaderboard and the environment. The report module only draws this; whoever fills it in owns
// the meaning (and the timestamps: rendering reads no clock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ragmig::report {

/// One attempt of a job on a slot (a Gantt bar).
struct Span {
  std::string slot;     ///< row
  std::string label;    ///< trial id shown on/near the bar, e.g. "t03" or "t03 eval"
  std::string group;    ///< colour key: bars of the same trial share a colour, e.g. "t03"
  double start = 0, end = 0;  ///< seconds since the sweep started; end == start allowed
  /// done | preempted | stopped | failed | cancelled | running | lost | unavailable: preempted and stopped
  /// ends get a distinct marker, failed a red outline, running an open end, cancelled and lost (or never
  /// started: unavailable) are faded.
  std::string outcome;
};

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

/// One rung evaluation of ASHA.
struct Rung {
  int64_t step = 0;
  double value = 0;
  std::string decision;  ///< continue | stop
};

struct LeaderRow {
  std::string trial, state;             ///< state: done | stopped | failed | running | queued | cancelled
  std::optional<double> metric;         ///< final evaluation (finished trials)
  std::optional<double> hybrid;         ///< the same fused with BM25 (sweeps with [eval] fusion)
  std::string fusion;                   ///< the fusion that gave `hybrid`
  bool baseline = false;                ///< a reference evaluated beside the trials (bm25, zero-shot): no training
  std::vector<Rung> rungs;              ///< rung evaluations (ASHA)
  int64_t steps = 0;
  double wall_s = 0;
  double flops = 0;                     ///< a full run's training FLOPs (train/work_estimate.h); 0: not counted
  double estimate_s = 0;                ///< those FLOPs at the sweep's measured rate; 0: none measured yet
  std::string slot;                     ///< where it ran last
  std::vector<std::pair<std::string, std::string>> params;  ///< key -> value text
};

/// One alert the scheduler's monitor raised: when, which rule, about what, and when it cleared.
struct AlertRow {
  double at = 0;            ///< seconds since the sweep started
  std::string rule;         ///< stall, loss_not_finite, slot_idle, ...
  std::string subject;      ///< the trial ("t03"), job or slot it is about
  std::string message;
  double cleared_after_s = -1;  ///< how long it fired; -1: firing still
};

/// A headline figure: what it is, its value in large type, and what it belongs to in small ("t02").
struct SummaryCard {
  std::string key, value;
  std::string detail = {};
};

struct ReportData {
  std::string title;                    ///< e.g. "Sweep squad-tiny"
  std::string subtitle;                 ///< e.g. sweep file and generated-at time
  std::string metric_name = "ndcg@10";
  std::string rung_metric_name = "recall@20";
  std::vector<SummaryCard> summary;     ///< headline figures: trials, done, best...
  std::vector<std::string> slots;       ///< Gantt rows in order (slot ids), e.g. "cpu:0", "mig:0:1g.18gb@0"
  std::vector<Span> spans;
  double horizon_s = 0;                 ///< time axis end (>= every span end); 0: taken from the data
  Series allocated;                     ///< fraction (0..1) of the compute (slices) held by jobs, step function over time (s)
  Series measured;                      ///< measured utilisation (0..1, mean over slots by compute) over time; may be empty
  std::vector<Series> loss;             ///< training loss per trial: (step, loss)
  std::vector<LeaderRow> leaderboard;   ///< already ranked best first
  std::vector<AlertRow> alerts;         ///< in the order they fired
  std::vector<std::pair<std::string, std::string>> environment;  ///< host, GPU/MIG layout, policy, slots...
};

}  // namespace ragmig::report
