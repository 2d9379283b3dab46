// Time for the scheduler loop. The loop asks the clock for the time and to wait; the simulator's clock
// jumps to the next event instead of sleeping, which is all that differs between the two.
#pragma once

#include <chrono>

#include "core/stop_signal.h"

namespace ragmig::sched {

/// Seconds since the Unix epoch on the system clock: the wall clock's time, and what run folders' files record.
inline double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class Clock {
 public:
  virtual ~Clock() = default;
  /// Seconds; the wall clock counts from the Unix epoch so times in the store survive restarts.
  virtual double now() = 0;
  /// Returns at `t` at the latest (earlier is allowed, e.g. when a signal arrives).
  virtual void wait_until(double t) = 0;
};

class WallClock : public Clock {
 public:
  double now() override { return unix_now(); }
  /// Early when SIGTERM or SIGINT arrives meanwhile (wait_for_stop): the scheduler's loop stops its jobs at
  /// once on Ctrl-C, not a tick later.
  void wait_until(double t) override {
    const double dt = t - now();
    if (dt > 0)
      wait_for_stop(std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(dt)));
  }
};

}  // namespace ragmig::sched
