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

/// Runs the replicas and returns the attempt's exit code. At the first failure the others get SIGTERM.
/// One replica: its own code (128 + signal when killed). A gang: combine_replica_exit_codes (a replica
/// that died makes the job resumable, 75; a real failure stays a failure). SIGTERM and SIGINT to the shim
/// itself are ignored: they are meant for the workers, which get them through the process group.
int run_shim(const ShimOptions& options);

}  // namespace ragmig::exec
