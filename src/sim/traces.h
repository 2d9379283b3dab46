// Readers for the cluster traces the simulator replays: Philly (as published with Pollux), Alibaba's GPU
// sharing trace (openb pod list), and ragmig's own jobs CSV. A malformed line is a DataError naming file:line.
#pragma once

#include <string>

#include "sim/workload.h"

namespace ragmig::sim {

/// Philly: `timestamp,duration,num_gpus[,...]` with a header. Each row is a job of num_gpus whole GPUs
/// ("gpu:<n>") arriving at its timestamp (seconds after the earliest one), of unknown type: its work is its
/// duration in whole-GPU seconds, and its estimate is that duration (trace simulators give SRTF the truth).
Workload read_philly(const std::string& path);

/// Alibaba openb pods: `name,cpu_milli,memory_mib,num_gpu,gpu_milli,...,qos,pod_phase,creation_time,
/// deletion_time,scheduled_time`. A pod arrives at creation_time and ran deletion_time - scheduled_time
/// seconds; pods without a GPU or never scheduled are left out (counted in the notes). A pod asking for a
/// fraction f = gpu_milli/1000 of one GPU gets, on a MIG cluster, the smallest profile of the cluster's
/// first MIG model whose compute share (slices/7) is at least f (it runs at least as fast as its share),
/// and on a whole-GPU cluster a whole GPU. Its work in whole-GPU seconds is duration * f^b (b the model's
/// fallback exponent), so that at its share of a GPU it runs for its traced duration. Priority by QoS:
/// Guaranteed 3, LS 2, Burstable 1, BE 0.
Workload read_openb(const std::string& path, const Cluster& cluster, double exponent);

/// ragmig's jobs CSV: header `arrival_s,name,type,iterations,slots,priority,estimate_s` and one job per row
/// (slots as `ragmig submit --slots` takes them). Every column is required.
Workload read_jobs_csv(const std::string& path);
/// The CSV text of `jobs` in the same format.
std::string format_jobs_csv(const std::vector<SimJob>& jobs);

/// Splits one CSV line on commas (the traces quote nothing).
std::vector<std::string> split_csv(const std::string& line);

}  // namespace ragmig::sim
