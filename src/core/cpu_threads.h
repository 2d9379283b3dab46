// How many threads a compute process uses, and how its OpenMP threads wait, chosen by ragmig rather than by
// environment variables a user must know. Several processes often share a machine's cores (CPU slots of the
// scheduler, a sweep's trials, other users' work): a process that starts one thread per core each, and whose
// OpenMP threads spin between parallel regions, then slows down tens of times, since a spinning thread burns
// the core that the thread it waits for needs. So: a CPU slot's job gets its share of the cores, and OpenMP
// threads sleep when idle. Waking them costs a process alone on the machine little at real model sizes and up
// to a third of a tiny model's step; bench/train/shared_cores.sh prints both sides.
#pragma once

namespace ragmig {

/// Cores this process may run on: its affinity mask (taskset, cgroup cpusets), at least 1.
int usable_cores();

/// A CPU slot's share of the cores when `cpu_slots` slots share them: usable_cores() / cpu_slots, at least 1.
int cpu_slot_threads(int cpu_slots);

/// The intra-op threads of a compute process by default: OMP_NUM_THREADS when it is a positive integer (the
/// scheduler sets it to a CPU slot's share), else usable_cores() / `processes_here` (replicas on this machine),
/// at least 1.
int default_compute_threads(int processes_here = 1);

/// Whether the environment says how OpenMP threads wait (OMP_WAIT_POLICY or GOMP_SPINCOUNT): then ragmig
/// leaves it as it is.
bool openmp_waits_chosen();

/// Makes OpenMP threads of processes started from here sleep when idle (OMP_WAIT_POLICY=PASSIVE) unless
/// openmp_waits_chosen(). OpenMP reads it when its library loads, so this is called before exec'ing a
/// LibTorch process.
void prefer_passive_openmp_waits();

}  // namespace ragmig
