// Waiting for the processes of a data-parallel gang as one job: the first that ends badly has the others
// stopped (SIGTERM: they checkpoint and exit 75), a stop can be asked for from outside, and what ignores the
// SIGTERM can be killed after a grace period. Shared by the scheduler's shim and `ragmig train --replicas`.
#pragma once

#include <sys/types.h>

#include <functional>
#include <vector>

namespace ragmig {

struct GangWaitOptions {
  /// Polled between checks (every 20 ms): true sends SIGTERM to every process still running.
  std::function<bool()> stop_requested;
  /// SIGKILL what still runs this many seconds after a SIGTERM; <= 0: never.
  double kill_after_s = 0;
};

struct GangExit {
  std::vector<int> codes;  ///< per process: its exit status, or 128 + the signal that ended it
  int first_signal = 0;    ///< the signal that ended the first process to fail (0 when it exited)
};

/// Waits until every process of `pids` (children of this process) has ended.
GangExit wait_gang(std::vector<pid_t> pids, const GangWaitOptions& options = {});

}  // namespace ragmig
