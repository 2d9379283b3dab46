// The [slurm] table of a sweep file: what `ragmig batch --backend slurm` tells sbatch, kept with the sweep.
//   [slurm]
//   partition = "gpu"
//   account = "retrieval"
//   qos = "normal"
//   time = "8:00:00"
//   sbatch = ["--constraint=h200", "--mail-type=FAIL"]
//   array_limit = 4   # at most 4 trials of the sweep's job array run at once
#pragma once

#include <string>

#include "exec/slurm_executor.h"

namespace ragmig::exec {

/// `options` with the file's [slurm] values where the command line left a field empty (the command line
/// wins); the file's sbatch options come before the command line's. No [slurm] table: `options` unchanged.
/// Throws ConfigError naming source:line and the key for an unknown key or a value of the wrong type, or a value
/// that is not one word (check_slurm_options).
SlurmOptions merge_slurm_table(const std::string& text, const std::string& source, SlurmOptions options);

/// Throws ConfigError naming the command-line option (--partition, --sbatch, ...) when a value that goes on sbatch's
/// command line is not one word: blanks or control characters would split it, and a line end would end the
/// script's comment that shows the command. An sbatch option must start with "--".
void check_slurm_options(const SlurmOptions& options);

}  // namespace ragmig::exec
