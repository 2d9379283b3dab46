// Where a training loop stands: what a checkpoint restores besides the weights, the optimiser's state and the
// random generators. With the batches a pure function of (seed, epoch, batch plan), it is all the loop needs to go
// on exactly where it stopped.
#pragma once

#include <cstdint>
#include <torch/torch.h>
#include <vector>

#include "train/batch_resize.h"
#include "train/train_config.h"

namespace ragmig::train {

struct LoopPosition {
  int64_t step = 0;            ///< steps done
  int64_t epoch = 0;
  int64_t batch_in_epoch = 0;  ///< the next of the epoch's batches
  int64_t samples = 0;         ///< queries trained on, all replicas together
  // The batch plan: the global batch now (train.batch_size until the scheduler asks for another, control.json),
  // the chunk of GradCache / plain accumulation, and the size the epoch began with and where it changed since:
  // an epoch's batches are those of the size it began with, cut again at each resize (batch_resize.h).
  int64_t global_batch = 0;
  int64_t chunk = 0;
  int64_t epoch_batch = 0;
  std::vector<EpochResize> epoch_resizes;

  /// Before the first step: train.batch_size and train.chunk_size.
  static LoopPosition start(const TrainOptions& t);

  void write(torch::serialize::OutputArchive& ar) const;
  /// What write() wrote. Checkpoints from before resizes have no batch plan: this one's stays (train.batch_size
  /// throughout).
  void read(torch::serialize::InputArchive& ar);
};

}  // namespace ragmig::train
