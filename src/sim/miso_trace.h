// MISO's evaluation trace (Li et al., "MISO: Exploiting Multi-Instance GPU Capability on Multi-Tenant GPU
// Clusters", SoCC'22), as its artifact's simulator reads it: 100 jobs, each a length in seconds on a whole
// A100 (61 s to 6,082 s, heavy-tailed: half under 250 s, the longest ten hold half of the work) and a model
// with its batch size, named as in MISO's per-slice table (../shared/data/traces/
// miso-a100-mig-iteration-seconds.txt). `miso:N` (sweep.h) replays it.
#pragma once

#include <span>

namespace ragmig::sim {

struct MisoTraceJob {
  double seconds;    ///< length on a whole A100-40GB (7g.40gb)
  const char* type;  ///< e.g. "resnet_train128": a row of MISO's table
};

/// The 100 jobs, in the trace's order (by length).
std::span<const MisoTraceJob> miso_trace();

}  // namespace ragmig::sim
