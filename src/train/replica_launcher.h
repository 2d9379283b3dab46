// `ragmig train --replicas N`: starts N copies of the worker on this machine with the torchrun variables
// (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1, a free MASTER_PORT), forwards SIGTERM/SIGINT, and
// stops the others when one fails — what the scheduler's shim does for a gang, for use by hand.
#pragma once

#include <string>
#include <vector>

namespace ragmig::train {

struct LaunchOptions {
  std::vector<std::string> argv;  ///< the worker command; argv[0] is an executable path
  int replicas = 2;
  std::string log_dir;            ///< ranks > 0 write <log_dir>/worker.rank<r>.log; rank 0 keeps our stdout/stderr
};

/// Runs the replicas to completion and returns their combined exit code (core/replica_exit.h). Throws IoError when one
/// cannot be started.
int launch_replicas(const LaunchOptions& opts);

}  // namespace ragmig::train
