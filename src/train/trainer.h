// `ragmig train` as a library call: one training run in one run folder, following the job protocol of
// DESIGN.md — events.jsonl, checkpoints/ (resumed from on restart), model/ at the end, and on a stop
// request (SIGTERM) a checkpoint and the Preempted outcome (exit 75).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "train/process_group.h"
#include "train/train_config.h"

namespace ragmig::train {

enum class Outcome { Done, Preempted };

struct RunOptions {
  std::string run_dir;
  bool terminal_progress = false;  ///< overwrite one progress line (stderr is a terminal)
  bool quiet = false;              ///< no human-facing lines on stderr at all
  /// One rank of a data-parallel job (world_size > 1): rank 0 writes the run folder, all ranks train and
  /// resume from it. A replica that is gone turns into the Preempted outcome (exit 75) on the others.
  std::optional<Rendezvous> rendezvous;
};

/// Trains as `cfg` says, resuming from the newest valid checkpoint in run_dir/checkpoints if any.
/// Throws ConfigError/DataError for bad input (before anything is written to the run folder but the
/// events), IoError for file system trouble.
Outcome run_training(const TrainConfig& cfg, const nlohmann::json& resolved_config, const RunOptions& opts);

}  // namespace ragmig::train
