// A realistic sweep for the report tests: 3 slots, 8 trials, preempted, stopped, failed, running, cancelled
// and zero-length attempts, loss curves and a leaderboard with params. Shared by the string and browser tests.
#pragma once

#include <cmath>
#include <string>

#include "report/report_data.h"

namespace ragmig::testing {

inline report::ReportData sample_report() {
  using report::Span;
  report::ReportData d;
  d.title = "Sweep squad-tiny";
  d.subtitle = "sweeps/squad-tiny.toml \u00b7 generated 2025-11-22 14:30 UTC";
  d.summary = {{"trials", "8"},   {"done", "4"},         {"stopped", "2"},
               {"failed", "1"},   {"running", "1"},      {"best ndcg@10", "0.4123", "t06"},
               {"best hybrid with BM25", "0.4512", "t06 \u00b7 Linear(alpha=0.5)"},
               {"wall time", "23 min 41 s"}, {"slot busy", "87 %"}, {"steps trained", "64 %", "of 8 x 600"}};
  d.slots = {"mig:0:3g.71gb@0", "mig:0:1g.18gb@4", "cpu:0"};
  d.spans = {
      {"mig:0:3g.71gb@0", "t01", "t01", 0, 420, "done"},
      {"mig:0:1g.18gb@4", "t02", "t02", 0, 300, "preempted"},
      {"cpu:0", "t03", "t03", 0, 980, "done"},
      {"mig:0:1g.18gb@4", "t05", "t05", 300, 520, "failed"},
      {"mig:0:3g.71gb@0", "t04", "t04", 420, 610, "stopped"},
      {"mig:0:1g.18gb@4", "t02", "t02", 520, 900, "done"},
      {"mig:0:3g.71gb@0", "t06", "t06", 610, 1130, "done"},
      {"mig:0:1g.18gb@4", "t07", "t07", 900, 1010, "stopped"},
      {"mig:0:1g.18gb@4", "t03 eval", "t03", 1010, 1070, "done"},
      {"cpu:0", "t05", "t05", 1100, 1100, "cancelled"},  // zero-length
      {"mig:0:3g.71gb@0", "t08", "t08", 1130, 1380, "running"},
      {"cpu:0", "t06 eval", "t06", 1140, 1190, "done"},
  };
  d.horizon_s = 1380;
  d.allocated = {"allocated", {{0, 1.0}, {980, 2.0 / 3}, {1070, 1.0 / 3}, {1100, 1.0 / 3}, {1130, 1.0 / 3},
                               {1140, 2.0 / 3}, {1190, 1.0 / 3}}};
  for (int t = 0; t <= 1380; t += 30)
    d.measured.points.push_back({t, 0.62 + 0.2 * std::sin(t / 97.0) - (t > 1000 ? 0.3 : 0.0)});
  d.measured.name = "measured";

  struct Curve {
    const char* trial;
    int steps;
    double floor, speed;
  };
  for (Curve c : {Curve{"t01", 900, 0.55, 260}, Curve{"t02", 900, 0.48, 220}, Curve{"t03", 900, 0.50, 300},
                  Curve{"t04", 300, 0.80, 400}, Curve{"t05", 150, 0.90, 200}, Curve{"t06", 900, 0.42, 200},
                  Curve{"t07", 300, 0.75, 500}, Curve{"t08", 600, 0.45, 210}}) {
    report::Series s{c.trial, {}};
    for (int step = 0; step <= c.steps; step += 10)
      s.points.push_back({step, c.floor + 2.3 * std::exp(-step / c.speed) + 0.03 * std::sin(step * 0.37)});
    d.loss.push_back(std::move(s));
  }

  auto row = [](std::string trial, std::string state, std::optional<double> metric, std::vector<report::Rung> rungs,
                int64_t steps, double wall, std::string slot, std::string lr, std::string batch) {
    report::LeaderRow r;
    r.trial = std::move(trial), r.state = std::move(state), r.metric = metric, r.rungs = std::move(rungs);
    r.steps = steps, r.wall_s = wall, r.slot = std::move(slot);
    r.params = {{"lr", std::move(lr)}, {"batch", std::move(batch)}, {"pooling", "mean"}};
    return r;
  };
  d.leaderboard = {
      row("t06", "done", 0.41234, {{100, 0.301, "continue"}, {300, 0.362, "continue"}}, 900, 520, "mig:0:3g.71gb@0",
          "3e-5", "64"),
      row("t02", "done", 0.39871, {{100, 0.288, "continue"}, {300, 0.351, "continue"}}, 900, 680, "mig:0:1g.18gb@4",
          "5e-5", "64"),
      row("t03", "done", 0.38112, {{100, 0.279, "continue"}, {300, 0.344, "continue"}}, 900, 1040, "mig:0:1g.18gb@4",
          "2e-5", "32"),
      row("t01", "done", 0.35020, {{100, 0.262, "continue"}, {300, 0.331, "continue"}}, 900, 420, "mig:0:3g.71gb@0",
          "1e-4", "32"),
      row("t08", "running", std::nullopt, {{100, 0.295, "continue"}}, 600, 250, "mig:0:3g.71gb@0", "4e-5", "128"),
      row("t04", "stopped", std::nullopt, {{100, 0.213, "stop"}}, 300, 190, "mig:0:3g.71gb@0", "1e-3", "16"),
      row("t07", "stopped", std::nullopt, {{100, 0.198, "stop"}}, 300, 110, "mig:0:1g.18gb@4", "2e-3", "16"),
      row("t05", "failed", std::nullopt, {}, 150, 220, "cpu:0", "5e-3", "256"),
  };
  d.leaderboard[1].params.push_back({"grad_cache", "on"});  // a key only one row has
  d.environment = {{"host", "node-7 (16 cores, 128 GiB)"},
                   {"GPU", "NVIDIA H100 80GB HBM3, MIG: 3g.40gb + 3g.40gb"},
                   {"policy", "asha(eta=3, min_steps=100, max_steps=900)"},
                   {"slots", "mig:0:1:0, mig:0:2:0, cpu:0"},
                   {"ragmig", "0.4.0 (5499b84)"},
                   {"GPUs", "none usable: NVML absent: cannot load NVML (libnvidia-ml.so.1): libnvidia-ml.so.1: cannot "
                            "open shared object file: No such file or directory"}};
  return d;
}

}  // namespace ragmig::testing
