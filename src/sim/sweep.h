// The generated workloads. `sweep:N`: the trials of one hyper-parameter sweep of retrievers, submitted
// together, as `ragmig batch` queues them. `miso:N`: MISO's evaluation workload — its trace's jobs (lengths
// and models) arriving as its simulator has them arrive. Both are documented here so that a simulated
// comparison can be read without this code. Draws come from splitmix64(seed, job, draw), so a seed gives the
// same jobs on every platform.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/throughput.h"
#include "sim/workload.h"

namespace ragmig::sim {

/// N jobs, all arriving at t = 0 (a sweep is submitted at once):
///  - kind: half small retrievers (MiniLM-sized), half base ones (BERT-base-sized), as sweeps that compare
///    encoders mix them. When the tables have ragmig's own types, measured per slice by
///    bench/mig/slice_speed.sh (sweep_draws_ragmig_types), those: small = ragmig_minilm_b64 or
///    ragmig_minilm_b256 (p = 0.25 each), base = ragmig_bert_base_b64 (p = 0.3) or ragmig_bert_base_b256
///    (p = 0.2), each asking for its smallest measured profile (smaller ones did not hold its peak memory).
///    Otherwise MISO's measured types stand in: small = embedding_train64 or embedding_train128 (seven on 1g
///    slices do 3-4x the work of one on the whole GPU), asking for 5 GB ("5gb:1"); base = bert_train2 or
///    bert_train4 (BERT fine-tuning: 2.6x faster on 7g than on 2g, so packing barely pays), asking for 10 GB
///    ("10gb:1"), which they needed on an A100.
///  - length: seconds on a whole GPU, log-uniform in [300, 7,200] (early-stopped and full-length trials),
///    turned into iterations of its type.
///  - priority: uniform over {0, 1, 2} (e.g. the grid's center trials first).
///  - estimate: the length on a whole GPU (what a short pilot run tells); sjf and srtf rank by it.
///  - batch (for dynamic batch): the type's (MISO's: small 64 or 128, base 64 or 128), each resizable down to
///    a quarter of it; the batch-independent part of the memory (weights, gradients, Adam state) 15 % of the
///    need for small and 20 % for base ones — below the scheduler's prior (25 %), as a retriever's is.
std::vector<SimJob> generate_sweep(int count, const ThroughputModel& model, uint64_t seed);

/// Whether generate_sweep draws ragmig's own job types: the tables measured all four on some MIG profile.
bool sweep_draws_ragmig_types(const ThroughputModel& model);

/// N jobs as MISO's evaluation runs them (its simulator's run.py defaults: 100 jobs on 8 GPUs): job i is row
/// i % 100 of MISO's trace (miso_trace.h: its length on a whole A100 and its model), asking for the smallest
/// MIG profile its type was measured on (e.g. "2g.10gb:1": smaller slices ran out of memory); priority 0;
/// estimate its length. They arrive in a seeded random order, the gaps Poisson-distributed with mean 30 s for
/// the first third of the jobs and 60 s after. The trace's 76,383 whole-GPU seconds arrive in about 5,000 s:
/// twice what 8 whole GPUs do in that time, about what they do with each job on its most efficient slice.
std::vector<SimJob> generate_miso_like(int count, const ThroughputModel& model, uint64_t seed);

/// A uniform draw in [0, 1) from (seed, job, draw).
double uniform01(uint64_t seed, uint64_t job, uint64_t draw);

/// The least makespan any schedule could have on `gpus` GPUs: every job's work at its most efficient slice
/// size (fewest GPU-seconds: iterations x seconds per iteration x slices / 7), summed, over the GPUs.
double work_bound_s(const std::vector<SimJob>& jobs, int gpus, const ThroughputModel& model);

}  // namespace ragmig::sim
