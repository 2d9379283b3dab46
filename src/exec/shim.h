// The worker shim: the process the executor starts for each attempt (`ragmig-shim`). It leads the
// attempt's session, starts one worker per replica, waits for them, and writes how they ended to an exit
// file — so a scheduler that died meanwhile still learns the exit code, and a job never runs twice.
#pragma once

#include <string>
#include <vector>

namespace ragmig::exec {

struct ShimOptions {
  int lock_fd = -1;                  ///< the attempt's lock, inherited from the executor; held until exit
  std::string exit_file;             ///< written atomically at the end: {"exit_code", "signal", "ended_at"}
  std::vector<std::string> devices;  ///< CUDA_VISIBLE_DEVICES per replica ("" for a CPU slot)
  std::vector<std::string> slots;    ///< RAGMIG_SLOT per replica
  std::string run_dir;               ///< replica i > 0 logs to <run>/worker.rank<i>.log
  std::vector<std::string> argv;     ///< the worker command
};

/// Runs the replicas and returns the attempt's exit code: 0 when all exit 0; otherwise the first failing
/// replica's code (128 + signal when killed), after SIGTERM to the others. SIGTERM and SIGINT to the shim
/// itself are ignored: they are meant for the workers, which get them through the process group.
int run_shim(const ShimOptions& options);

}  // namespace ragmig::exec
