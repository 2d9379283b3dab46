// Running a short command and reading what it prints: Slurm's client commands (sbatch, squeue, scancel,
// sinfo), looked up in PATH, with stdout and stderr kept apart and a time limit.
#pragma once

#include <string>
#include <vector>

namespace ragmig::exec {

struct CommandOutput {
  int exit_code = -1;  ///< 127: could not be run; 124: killed at the time limit; 128 + n: killed by signal n
  std::string out, err;
};

/// Runs argv (argv[0] found in PATH) with stdin from /dev/null, and waits at most `timeout_s`; then kills it
/// and every process it started (its own process group). Throws IoError only when no process can be started.
CommandOutput run_command(const std::vector<std::string>& argv, double timeout_s = 30);

}  // namespace ragmig::exec
