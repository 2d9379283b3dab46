// The simulator's clock: time is a number the driver moves forward to the next event, and waiting is a jump,
// never a sleep. It is the one Clock the simulator gives the scheduler in place of the wall clock.
#pragma once

#include <algorithm>

#include "sched/clock.h"

namespace ragmig::sim {

class SimClock : public sched::Clock {
 public:
  explicit SimClock(double start = 0) : now_(start) {}
  double now() override { return now_; }
  /// Jumps to `t`; time never runs backwards.
  void wait_until(double t) override { now_ = std::max(now_, t); }

 private:
  double now_;
};

}  // namespace ragmig::sim
