// The scheduler's /metrics: one Observation as Prometheus gauges, in base units with conventional names.
// Slot series carry labels that join with NVIDIA's DCGM exporter (gpu, UUID, GPU_I_ID, GPU_I_PROFILE); job
// series carry the job's id (job_id), name and slot. examples/monitoring/ has rules and a dashboard for these names.
#pragma once

#include <map>
#include <string>

#include "monitor/alert.h"
#include "monitor/metrics.h"
#include "monitor/observation.h"

namespace ragmig::monitor {

/// Adds `observation`'s gauges to `registry` (a fresh one per scrape: finished jobs' series disappear), and
/// ragmig_alerts_firing per rule from `firing`.
void add_observation(Registry& registry, const Observation& observation,
                     const std::map<std::string, AlertChange>& firing);

}  // namespace ragmig::monitor
