// The measurements file: seconds per iteration per (job type, slot profile) measured from the jobs that a
// real `ragmig run` finished, in the format of the throughput tables, so that the simulator replays a
// workload at the speeds it really ran at.
#pragma once

#include "sched/store.h"
#include "sim/throughput.h"

namespace ragmig::sim {

/// For every finished job of `store`: its type is its name; its slot profile is that of the slot its last
/// attempt ran on (from the slot table `ragmig run` keeps, "cpu" for CPU slots it no longer lists); its
/// time is the sum of its attempts' durations (start to end as the scheduler saw them, so starting the
/// process and noticing its exit are part of it); its iterations are the last step its worker reported in
/// its events, or 1 when it reported none (a job that is one unit of work). A (type, profile) entry is the
/// total time over the total iterations of its jobs.
ThroughputTable measure_throughputs(sched::Store& store);

}  // namespace ragmig::sim
