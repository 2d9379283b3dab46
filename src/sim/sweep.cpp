// The workload generators (see sweep.h for the distributions and why).
#include "sim/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/splitmix.h"

namespace ragmig::sim {
namespace {

// const, not constexpr: clang with libstdc++ 12 cannot evaluate a std::string member at compile time.
const SlotShape kWhole{sched::SlotKind::Mig, "", 7};

// log-uniform in [lo, hi] from a uniform draw u.
double log_uniform(double lo, double hi, double u) { return lo * std::pow(hi / lo, u); }

}  // namespace

double uniform01(uint64_t seed, uint64_t job, uint64_t draw) {
  const uint64_t x = splitmix64(splitmix64(splitmix64(seed) ^ job) ^ draw);
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

std::vector<SimJob> generate_sweep(int count, const ThroughputModel& model, uint64_t seed) {
  struct Kind {
    double share;
    const char* type;
    const char* need;
    int64_t batch, min_batch;
    double fixed_share;
  };
  static constexpr Kind kKinds[] = {{0.25, "embedding_train64", "5gb:1", 64, 16, 0.15},
                                    {0.25, "embedding_train128", "5gb:1", 128, 32, 0.15},
                                    {0.3, "bert_train2", "10gb:1", 64, 16, 0.2},
                                    {0.2, "bert_train4", "10gb:1", 128, 32, 0.2}};
  std::vector<SimJob> jobs;
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<uint64_t>(i);
    const double u = uniform01(seed, k, 0);
    const Kind* kind = &kKinds[3];
    double cumulative = 0;
    for (const auto& c : kKinds)
      if (u < (cumulative += c.share)) {
        kind = &c;
        break;
      }
    SimJob job;
    job.name = fmt::format("sweep-{}", i);
    job.type = kind->type;
    const double length = log_uniform(300, 7200, uniform01(seed, k, 1));
    job.iterations = std::round(length / seconds_per_iteration(model, job.type, kWhole));
    job.priority = static_cast<int64_t>(uniform01(seed, k, 2) * 3);
    job.need = sched::parse_need(kind->need);
    job.estimate_s = job.iterations * seconds_per_iteration(model, job.type, kWhole);
    job.batch_size = kind->batch;
    job.min_batch_size = kind->min_batch;
    job.memory_fixed_mb = kind->fixed_share * static_cast<double>(job.need.min_memory_mb);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<SimJob> generate_miso_like(int count, const ThroughputModel& model, uint64_t seed) {
  std::vector<std::pair<std::string, std::string>> types;  // (type, its smallest measured MIG profile)
  for (const auto& [type, entries] : model.table) {
    std::string smallest;
    for (const auto& [profile, seconds] : entries)
      if (const int g = profile_compute(profile); g > 0 && (smallest.empty() || g < profile_compute(smallest)))
        smallest = profile;
    if (!smallest.empty()) types.emplace_back(type, smallest);
  }
  if (types.empty()) throw ConfigError("miso:N needs a throughput table with MIG measurements (--throughputs)");
  const double lo = 600, hi = 10800;
  const double mean_gap = 60;  // MISO's run.py --arrival default
  std::vector<SimJob> jobs;
  double t = 0;
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<uint64_t>(i);
    const auto& [type, profile] = types[std::min(types.size() - 1, static_cast<size_t>(uniform01(seed, k, 0) * types.size()))];
    SimJob job;
    job.name = fmt::format("miso-{}", i);
    job.type = type;
    job.arrival = t;
    const double length = log_uniform(lo, hi, uniform01(seed, k, 1));
    job.iterations = std::round(length / seconds_per_iteration(model, type, kWhole));
    job.need = sched::parse_need(profile + ":1");
    job.estimate_s = job.iterations * seconds_per_iteration(model, type, kWhole);
    jobs.push_back(std::move(job));
    t += -mean_gap * std::log(1 - uniform01(seed, k, 2));
  }
  return jobs;
}

double work_bound_s(const std::vector<SimJob>& jobs, int gpus, const ThroughputModel& model) {
  double work = 0;
  for (const auto& j : jobs) {
    double best = std::numeric_limits<double>::infinity();
    for (int g = std::max(1, j.need.min_compute); g <= 7; ++g)
      best = std::min(best, j.iterations * seconds_per_iteration(model, j.type, SlotShape{sched::SlotKind::Mig, "", g}) * g / 7);
    work += best;
  }
  return work / std::max(gpus, 1);
}

}  // namespace ragmig::sim
