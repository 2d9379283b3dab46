// How the exit codes of a gang's replicas combine into the job's exit code (the job protocol's codes:
// 0 done, 2 bad input, 75 resumable). Shared by `ragmig train --replicas` and the scheduler's shim.
#pragma once

#include <vector>

namespace ragmig {

/// `codes` as a shell reports them (128 + signal for a replica killed by a signal). 0 when all are 0;
/// 2 when one reported bad input; otherwise the first real failure (1..128 other than 2 and 75); otherwise
/// 75 when one was preempted or killed — a replica that dies makes the whole job resumable.
int combine_replica_exit_codes(const std::vector<int>& codes);

}  // namespace ragmig
