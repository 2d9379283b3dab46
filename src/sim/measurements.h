// The measurements file: seconds per iteration per (job type, slot profile) measured from the jobs that a
// real `ragmig run` finished, in the format of the throughput tables, so that the simulator replays a
// workload at the speeds it really ran at.
#pragma once

#include "sched/store.h"
#include "sim/throughput.h"

namespace ragmig::sim {

/// For every finished job of `store`: its type is its name. A job that reported steps counts each attempt on
/// the slot profile it ran on (from the slot table `ragmig run` keeps, or from the id of a slot it no longer
/// lists: "cpu" for CPU slots, the profile for MIG instances):
/// the steps the attempt made (from the step its start event names, else the job's last checkpoint before it,
/// to the last it reported) over the attempt's time (start to end as the scheduler saw them, so starting the
/// process and noticing its exit are part of it); a job moved between slices thus measures each. A job that
/// reported no steps is one unit of work: all its attempts' time, on the profile it finished on. A (type,
/// profile) entry is the total time over the total iterations.
ThroughputTable measure_throughputs(sched::Store& store);

}  // namespace ragmig::sim
