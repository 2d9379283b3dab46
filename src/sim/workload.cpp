// Workload specs and the dispatch to the readers and the generator.
#include "sim/workload.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "core/strings.h"
#include "sim/sweep.h"
#include "sim/traces.h"

namespace ragmig::sim {
namespace {

const char* kForms = "philly:PATH, openb:PATH, jobs:PATH, sweep:N or miso:N";

const char* kind_name(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Philly: return "philly";
    case WorkloadKind::Openb: return "openb";
    case WorkloadKind::Sweep: return "sweep";
    case WorkloadKind::Miso: return "miso";
    case WorkloadKind::Jobs: return "jobs";
  }
  return "?";
}

}  // namespace

WorkloadSpec parse_workload_spec(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    throw ConfigError(fmt::format("workload '{}': expected {}", text, kForms));
  const std::string kind = text.substr(0, colon), rest = text.substr(colon + 1);
  WorkloadSpec spec;
  if (kind == "sweep" || kind == "miso") {
    spec.kind = kind == "sweep" ? WorkloadKind::Sweep : WorkloadKind::Miso;
    constexpr int64_t kMostJobs = 10'000'000;
    const auto count = whole_number(rest, 1, kMostJobs);
    if (!count || rest[0] == '0')
      throw ConfigError(fmt::format("workload '{}': {}:N needs a job count from 1 to {}", text, kind, kMostJobs));
    spec.count = static_cast<int>(*count);
    return spec;
  }
  if (kind == "philly") spec.kind = WorkloadKind::Philly;
  else if (kind == "openb") spec.kind = WorkloadKind::Openb;
  else if (kind == "jobs") spec.kind = WorkloadKind::Jobs;
  else throw ConfigError(fmt::format("workload '{}': unknown kind '{}' (expected {})", text, kind, kForms));
  if (rest.empty()) throw ConfigError(fmt::format("workload '{}': no path", text));
  spec.path = rest;
  return spec;
}

std::string to_string(const WorkloadSpec& spec) {
  if (spec.kind == WorkloadKind::Sweep || spec.kind == WorkloadKind::Miso)
    return fmt::format("{}:{}", kind_name(spec.kind), spec.count);
  return std::string(kind_name(spec.kind)) + ":" + spec.path;
}

void sort_by_arrival(std::vector<SimJob>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const SimJob& a, const SimJob& b) { return a.arrival < b.arrival; });
}

Workload load_workload(const WorkloadSpec& spec, const Cluster& cluster, const ThroughputModel& model, uint64_t seed) {
  switch (spec.kind) {
    case WorkloadKind::Philly: return read_philly(spec.path);
    case WorkloadKind::Openb: return read_openb(spec.path, cluster, model.fallback_exponent);
    case WorkloadKind::Jobs: return read_jobs_csv(spec.path);
    case WorkloadKind::Sweep:
      return Workload{generate_sweep(spec.count, model, seed),
                      {sweep_draws_ragmig_types(model)
                           ? "sweep: ragmig's job types, as measured per slice (bench/mig/slice_speed.sh)"
                           : "sweep: MISO's measured types stand in for ragmig's (no ragmig_* types in the tables)"}};
    case WorkloadKind::Miso:
      return Workload{generate_miso_like(spec.count, model, seed), {}};
  }
  return {};
}

}  // namespace ragmig::sim
