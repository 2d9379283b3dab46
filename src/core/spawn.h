// Starting one worker process: fork/exec with variables added to (or replacing those in) this process's
// environment, stdout and stderr optionally appended to a log file, and SIGTERM/SIGINT unblocked and back to
// their default in the child (stop_signal.h). Shared by `ragmig train --replicas` and the scheduler's shim.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace ragmig {

struct SpawnOptions {
  std::vector<std::string> argv;                            ///< argv[0] is the program
  std::vector<std::pair<std::string, std::string>> env;     ///< set in the child, replacing inherited values
  std::string log_path;                                     ///< "" = inherit stdout and stderr
  bool search_path = false;                                 ///< look argv[0] up in PATH (execvpe)
};

/// Starts the process and returns its pid. Throws IoError when the log cannot be opened or fork fails. A
/// program that cannot be executed exits 127 after saying why on its stderr.
pid_t spawn_process(const SpawnOptions& options);

}  // namespace ragmig
