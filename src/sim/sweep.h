// The generated workload `sweep:N`: the trials of one hyper-parameter sweep of a BERT retriever, submitted
// together, as `ragmig` would queue them from a sweep file. The distribution is documented on
// generate_sweep so that a simulated comparison can be read without this code.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/throughput.h"
#include "sim/workload.h"

namespace ragmig::sim {

/// N jobs, all arriving at t = 0 (a sweep is submitted at once). Draws come from splitmix64(seed, job,
/// draw), so a seed gives the same jobs on every platform.
///  - size: the batch-size class of the trial, bert_train2 (p = 0.6) or bert_train4 (p = 0.4): MISO's
///    BERT fine-tuning at two batch sizes, measured on every A100 slice from 2g.10gb up, standing in for
///    ragmig's BERT dual encoder. Both ran out of memory on a 1g.5gb and fit a 2g.10gb, so the job asks
///    for 10 GB ("10gb:1"), which a 1g.18gb slice of an H200 holds.
///  - length: iterations log-uniform in [5,000, 100,000] (a trial of a few minutes to over an hour on a
///    whole GPU; a log-uniform spread is what sweeps with early-stopped and full-length trials look like).
///  - priority: uniform over {0, 1, 2} (e.g. the grid's center trials first).
///  - estimate: iterations x its seconds per iteration on a whole GPU (7 slices) from `model`, i.e. what a
///    short pilot run would tell; sjf and srtf rank by it.
std::vector<SimJob> generate_sweep(int count, const ThroughputModel& model, uint64_t seed);

/// A uniform draw in [0, 1) from (seed, job, draw).
double uniform01(uint64_t seed, uint64_t job, uint64_t draw);

}  // namespace ragmig::sim
