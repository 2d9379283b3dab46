// How much device memory one replica of a resizable job needs at a global batch size: a fixed part (weights,
// gradients, optimiser state) plus a part per sample (activations). Known before a job runs only from its Need
// (the memory at its configured batch) and a stated prior for the fixed share; learned from the job's own
// events once it has run (the trainer reports its peak and its fixed part). Pure functions.
#pragma once

#include <cstdint>

#include "sched/job.h"

namespace ragmig::sched {

struct MemoryModel {
  double fixed_mb = 0;
  double per_sample_mb = 0;  ///< per sample of the global batch, on one replica
  bool learned = false;      ///< from the job's events, not the prior
};

/// The prior's fixed share of the memory a Need names at the configured batch. A retriever's fixed part is
/// 10-20 % of it at the batch sizes people train at (BERT-base: 1.8 GB of weights, gradients and Adam state
/// beside ~0.1 GB of activations per 256-token pair); a larger share overestimates what a smaller batch needs,
/// so a start chosen by the prior does not run out of memory when the true share is smaller.
inline constexpr double kPriorFixedShare = 0.25;

/// Before any event: `need.min_memory_mb` at `batch_size`, kPriorFixedShare of it fixed.
MemoryModel prior_memory(const Need& need, int64_t batch_size);

/// From a worker's report: peak memory `peak_mb` of one replica at global batch `batch_size`, of which
/// `state_mb` does not depend on the batch. Not `learned` (all zero) when the report is unusable: a
/// non-positive batch, a peak that is not finite, or one below the state.
MemoryModel learned_memory(double peak_mb, double state_mb, int64_t batch_size);

/// `model` raised after a worker ran out of memory on slots of `slot_memory_mb`: such slots now hold at most
/// global batch `holds` (the batch the retry asks for; 0: none), so that dynamic batch never tries more there.
/// The fixed part is kept (capped at the slot's memory); unchanged when the model already says no more fits.
MemoryModel after_out_of_memory(MemoryModel model, int64_t slot_memory_mb, int64_t holds);

/// Memory one replica needs at global batch `batch`.
double memory_at(const MemoryModel& model, int64_t batch);

/// The largest global batch in [least, most], a multiple of `replicas`, whose memory fits `memory_mb`; 0 when
/// none does.
int64_t largest_batch_within(const MemoryModel& model, int64_t memory_mb, int64_t least, int64_t most, int replicas);

}  // namespace ragmig::sched
