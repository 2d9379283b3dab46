// The sweep generator (see sweep.h for the distribution and why).
#include "sim/sweep.h"

#include <fmt/format.h>

#include <cmath>

#include "core/splitmix.h"

namespace ragmig::sim {

double uniform01(uint64_t seed, uint64_t job, uint64_t draw) {
  const uint64_t x = splitmix64(splitmix64(splitmix64(seed) ^ job) ^ draw);
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

std::vector<SimJob> generate_sweep(int count, const ThroughputModel& model, uint64_t seed) {
  std::vector<SimJob> jobs;
  const SlotShape whole{sched::SlotKind::Gpu, "", 7};
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<uint64_t>(i);
    SimJob job;
    job.name = fmt::format("sweep-{}", i);
    job.type = uniform01(seed, k, 0) < 0.6 ? "bert_train2" : "bert_train4";
    job.iterations = std::round(5000.0 * std::pow(20.0, uniform01(seed, k, 1)));
    job.priority = static_cast<int64_t>(uniform01(seed, k, 2) * 3);
    job.need = sched::parse_need("10gb:1");
    job.estimate_s = job.iterations * seconds_per_iteration(model, job.type, whole);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace ragmig::sim
