// The workload generators (see sweep.h for the distributions and why).
#include "sim/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/splitmix.h"
#include "sim/miso_trace.h"

namespace ragmig::sim {
namespace {

// const, not constexpr: clang with libstdc++ 12 cannot evaluate a std::string member at compile time.
const SlotShape kWhole{sched::SlotKind::Mig, "", 7};

// log-uniform in [lo, hi] from a uniform draw u.
double log_uniform(double lo, double hi, double u) { return lo * std::pow(hi / lo, u); }

// A Poisson draw of the given mean from a uniform draw u, by inverting the distribution function.
int poisson(double mean, double u) {
  double p = std::exp(-mean), cumulative = p;
  int k = 0;
  while (u > cumulative && k < 100 * mean + 100) {
    p *= mean / ++k;
    cumulative += p;
  }
  return k;
}

struct SweepKind {
  double share;
  const char* type;
  const char* need;  ///< nullptr: the type's smallest measured MIG profile
  int64_t batch, min_batch;
  double fixed_share;
};
const SweepKind kMisoKinds[] = {{0.25, "embedding_train64", "5gb:1", 64, 16, 0.15},
                                {0.25, "embedding_train128", "5gb:1", 128, 32, 0.15},
                                {0.3, "bert_train2", "10gb:1", 64, 16, 0.2},
                                {0.2, "bert_train4", "10gb:1", 128, 32, 0.2}};
const SweepKind kRagmigKinds[] = {{0.25, "ragmig_minilm_b64", nullptr, 64, 16, 0.15},
                                  {0.25, "ragmig_minilm_b256", nullptr, 256, 64, 0.15},
                                  {0.3, "ragmig_bert_base_b64", nullptr, 64, 16, 0.2},
                                  {0.2, "ragmig_bert_base_b256", nullptr, 256, 64, 0.2}};

// The smallest MIG profile `type` was measured on ("" if none): smaller ones ran out of memory.
std::string smallest_measured_profile(const ThroughputModel& model, const std::string& type) {
  std::string smallest;
  const auto entries = model.table.find(type);
  if (entries != model.table.end())
    for (const auto& [profile, seconds] : entries->second)
      if (const int g = profile_compute(profile); g > 0 && (smallest.empty() || g < profile_compute(smallest)))
        smallest = profile;
  return smallest;
}

}  // namespace

double uniform01(uint64_t seed, uint64_t job, uint64_t draw) {
  const uint64_t x = splitmix64(splitmix64(splitmix64(seed) ^ job) ^ draw);
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

bool sweep_draws_ragmig_types(const ThroughputModel& model) {
  return std::all_of(std::begin(kRagmigKinds), std::end(kRagmigKinds),
                     [&](const SweepKind& k) { return !smallest_measured_profile(model, k.type).empty(); });
}

std::vector<SimJob> generate_sweep(int count, const ThroughputModel& model, uint64_t seed) {
  const bool ragmig = sweep_draws_ragmig_types(model);
  const auto& kinds = ragmig ? kRagmigKinds : kMisoKinds;
  std::vector<SimJob> jobs;
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<uint64_t>(i);
    const double u = uniform01(seed, k, 0);
    const SweepKind* kind = &kinds[3];
    double cumulative = 0;
    for (const auto& c : kinds)
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
    job.need = sched::parse_need(kind->need ? kind->need : smallest_measured_profile(model, job.type) + ":1");
    job.estimate_s = job.iterations * seconds_per_iteration(model, job.type, kWhole);
    job.batch_size = kind->batch;
    job.min_batch_size = kind->min_batch;
    job.memory_fixed_mb = kind->fixed_share * static_cast<double>(job.need.min_memory_mb);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<SimJob> generate_miso_like(int count, const ThroughputModel& model, uint64_t seed) {
  const auto trace = miso_trace();
  // Arrival order: a seeded shuffle (Fisher-Yates) of jobs 0..count-1, job i being trace row i % 100.
  std::vector<size_t> order(static_cast<size_t>(std::max(count, 0)));
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[static_cast<size_t>(uniform01(seed, i - 1, 3) * static_cast<double>(i))]);
  std::vector<SimJob> jobs;
  double t = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& row = trace[order[k] % trace.size()];
    const std::string smallest = smallest_measured_profile(model, row.type);
    if (smallest.empty())
      throw ConfigError(fmt::format("miso:N needs MISO's per-slice table (--throughputs): no MIG measurement of '{}'",
                                    row.type));
    // MISO's run.py: the first third of the jobs arrive twice as often; gaps are Poisson-distributed seconds.
    const double mean_gap = k <= static_cast<size_t>(count / 3) ? 30 : 60;
    t += poisson(mean_gap, uniform01(seed, k, 2));
    SimJob job;
    job.name = fmt::format("miso-{}", order[k]);
    job.type = row.type;
    job.arrival = t;
    job.iterations = std::max(1.0, std::round(row.seconds / seconds_per_iteration(model, job.type, kWhole)));
    job.need = sched::parse_need(smallest + ":1");
    job.estimate_s = row.seconds;
    jobs.push_back(std::move(job));
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
