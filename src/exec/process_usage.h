// CPU time of a worker's whole session (the shim and every process it started), from /proc. The executor
// turns two samples into the utilisation `ragmig status` shows for CPU slots.
#pragma once

#include <sys/types.h>

namespace ragmig::exec {

/// Seconds of CPU (user + system) used so far by the live processes of session `sid`; -1 without /proc.
double session_cpu_seconds(pid_t sid);

}  // namespace ragmig::exec
