// Test doubles for driving a Scheduler in-process: an executor that starts nothing and reports what the test
// scripts (a worker's event lines, its exit), and a clock the test moves.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "sched/clock.h"
#include "sched/executor.h"

namespace ragmig::sched {

// Starts nothing: the event lines a test gives it reach the scheduler as a worker's events.jsonl would.
class ScriptedExecutor : public Executor {
 public:
  int64_t start(const Launch& launch) override {
    attempt_[launch.job] = launch.attempt_id;
    started.push_back(launch.job);
    return 0;
  }
  void stop(JobId, double) override {}
  ExecUpdate poll(double) override {
    ExecUpdate update;
    update.events.swap(events_);
    update.exits.swap(exits_);
    return update;
  }
  std::optional<ExitStatus> reattach(const Launch&, int64_t) override { return std::nullopt; }
  double next_event_time(double now) override { return now + 1; }

  void emit(JobId job, const std::vector<nlohmann::json>& events) {
    EventLines lines{job, attempt_[job], {}, 0};
    for (const auto& e : events) {
      lines.lines.push_back(e.dump());
      offset_[job] += static_cast<int64_t>(lines.lines.back().size()) + 1;
    }
    lines.offset = offset_[job];
    events_.push_back(std::move(lines));
  }
  /// The job's current attempt exits with `code`.
  void finish(JobId job, int code = 0) {
    ExitStatus exit;
    exit.job = job;
    exit.attempt_id = attempt_[job];
    exit.exit_code = code;
    exits_.push_back(exit);
  }

  std::vector<JobId> started;

 private:
  std::map<JobId, int64_t> attempt_, offset_;
  std::vector<EventLines> events_;
  std::vector<ExitStatus> exits_;
};

class StepClock : public Clock {
 public:
  double now() override { return t; }
  void wait_until(double until) override { t = std::max(t, until); }
  double t = 1000;
};

}  // namespace ragmig::sched
