// What the simulator replays: jobs with an arrival time, a job type and an amount of work, resource needs
// and a priority. Workload specs name where they come from and round-trip: "philly:PATH", "openb:PATH",
// "sweep:28", "miso:100", "jobs:PATH" (ragmig's own CSV of jobs, used for hand-made traces and replays of real runs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/job.h"
#include "sim/cluster.h"
#include "sim/throughput.h"

namespace ragmig::sim {

struct SimJob {
  double arrival = 0;      ///< seconds from the start of the workload
  std::string name;
  std::string type;        ///< job type for the throughput model; "" = not measured (the fallback applies)
  double iterations = 0;   ///< work in iterations of `type`; for unmeasured types, seconds on a whole GPU
  sched::Need need;
  int64_t priority = 0;
  double estimate_s = 0;   ///< what sjf and srtf are told (seconds on a speed-1 slot); 0 = unknown
  /// Resizable jobs (dynamic batch; batch_size 0: not resizable): the batch `need`'s memory is for, the least
  /// one it may train at, and the part of that memory that does not grow with the batch (the rest grows in
  /// proportion). The simulator takes a job's samples per second on a slice to be the same at any batch.
  int64_t batch_size = 0, min_batch_size = 0;
  double memory_fixed_mb = 0;
};

struct Workload {
  std::vector<SimJob> jobs;        ///< ordered by arrival, then as read
  std::vector<std::string> notes;  ///< rows left out and why ("897 pods never scheduled")
};

enum class WorkloadKind { Philly, Openb, Sweep, Miso, Jobs };

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::Sweep;
  std::string path;  ///< philly, openb, jobs
  int count = 0;     ///< sweep, miso
};

/// Throws ConfigError naming the spec and the expected forms.
WorkloadSpec parse_workload_spec(const std::string& text);
std::string to_string(const WorkloadSpec& spec);

/// Loads or generates the workload. The cluster decides how Alibaba's GPU fractions become slices, the model
/// gives the sweep's estimates, the seed draws the sweep. Throws DataError (file:line) or IoError.
Workload load_workload(const WorkloadSpec& spec, const Cluster& cluster, const ThroughputModel& model, uint64_t seed);

/// Sorts by arrival, keeping the order of jobs that arrive together.
void sort_by_arrival(std::vector<SimJob>& jobs);

}  // namespace ragmig::sim
