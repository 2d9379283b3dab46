// Thread counts from the affinity mask and OMP_NUM_THREADS (see cpu_threads.h).
#include "core/cpu_threads.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

namespace ragmig {

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

int cpu_slot_threads(int cpu_slots) { return std::max(1, usable_cores() / std::max(1, cpu_slots)); }

int default_compute_threads(int processes_here) {
  if (const char* env = std::getenv("OMP_NUM_THREADS"); env && *env) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (*end == '\0' && n > 0 && n <= 4096) return static_cast<int>(n);
  }
  return std::max(1, usable_cores() / std::max(1, processes_here));
}

bool openmp_waits_chosen() { return std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT"); }

void prefer_passive_openmp_waits() {
  if (!openmp_waits_chosen()) ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
}

}  // namespace ragmig
