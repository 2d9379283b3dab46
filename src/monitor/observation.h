// One sample of everything the monitor watches, taken after a scheduler pass: slots with their utilisation
// and memory, the jobs that are running or have a history worth watching, the queue, and the queue's
// estimated finish. /metrics renders it and the alert rules read it; neither reads a clock or a process.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "monitor/job_watch.h"
#include "sched/job.h"
#include "sched/slot.h"

namespace ragmig::monitor {

/// Labels that join a slot's series with NVIDIA's DCGM exporter: GPU index, the GPU's UUID, and for a MIG
/// instance its GPU-instance id and profile. Empty where they do not apply (CPU slots) or are unknown.
struct SlotHardware {
  std::string gpu, uuid, gpu_instance_id, gpu_instance_profile;
  int64_t memory_used_bytes = -1;   ///< -1 unknown
  int64_t memory_total_bytes = -1;
};

struct SlotObservation {
  sched::Slot slot;
  sched::JobId job = 0;             ///< 0: free
  double utilization = -1;          ///< 0..1 of the slot its job uses; -1 unknown
  SlotHardware hardware;
  bool fits_waiting_job = false;    ///< a job that waits could start here (free slots)
};

struct JobObservation {
  sched::JobId id = 0;
  std::string name;
  sched::JobState state = sched::JobState::Queued;
  std::vector<std::string> slots;   ///< running jobs
  int replicas = 1;
  double started_at = 0;            ///< running jobs: the attempt's start (scheduler's clock)
  double estimate_s = 0;            ///< the job's own estimate of its work (0 unknown)
  int64_t attempts = 0, failures = 0;
  JobWatch watch;
};

struct Observation {
  double now = 0;
  std::vector<SlotObservation> slots;
  /// Running jobs, queued jobs that have run before (a crash loop waits between its attempts), and jobs that
  /// ended within [alerts] forget_after_s (a job that failed on a NaN loss or out of memory).
  std::vector<JobObservation> jobs;
  std::map<sched::JobState, int64_t> job_counts;
  int64_t waiting = 0;              ///< queued jobs that may start now (not backing off, not held)
  double oldest_wait_s = 0, mean_wait_s = 0;  ///< over those
  int64_t host_memory_used_bytes = -1, host_memory_total_bytes = -1;
  std::optional<double> queue_finish_at;  ///< when every queued and running job should be done (estimate)
  /// Training FLOP/s on a speed-1 slot as the jobs' progress measures it: what counted work (JobSpec::work) is
  /// priced at (sched::Scheduler::work_rate); nullopt before a measurement.
  std::optional<double> work_rate;
  double deadline = 0;              ///< [alerts] deadline (Unix time); 0: none
};

}  // namespace ragmig::monitor
