// The trace readers. Columns are found by their header names, so extra or reordered columns do not matter;
// every value is checked, and a bad one names file:line and the column.
#include "sim/traces.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "core/error.h"
#include "core/line_reader.h"
#include "core/strings.h"
#include "gpu/mig_catalog.h"

namespace ragmig::sim {
namespace {

constexpr double kPlausibleSeconds = 1e9;

// The header's column positions, by name.
class Columns {
 public:
  Columns(LineReader& in, const std::vector<std::string>& required) : path_(in.path()) {
    std::string header;
    if (!in.next(header)) throw DataError(path_, 1, "empty file (expected a header line)");
    const auto names = split_csv(header);
    for (size_t i = 0; i < names.size(); ++i) index_[names[i]] = i;
    for (const auto& r : required)
      if (!index_.count(r))
        throw DataError(path_, 1, fmt::format("no column '{}' in the header '{}'", r, header));
    width_ = names.size();
  }
  const std::string& get(const std::vector<std::string>& row, const std::string& name, int64_t line) const {
    const size_t i = index_.at(name);
    if (row.size() != width_)
      throw DataError(path_, line, fmt::format("{} fields, the header has {}", row.size(), width_));
    return row[i];
  }
  /// Every number of a trace is a time or an amount of work; beyond `max` (about 31 years of seconds by
  /// default) it is a corrupt field, whose sums would print as inf or nan.
  double number(const std::vector<std::string>& row, const std::string& name, int64_t line, double min,
                double max = kPlausibleSeconds) const {
    const std::string& text = get(row, name, line);
    if (const auto value = finite_number(text, min, max)) return *value;
    throw DataError(path_, line, fmt::format("{} must be a number from {} to {:g}, got '{}'", name, min, max, text));
  }
  int64_t integer(const std::vector<std::string>& row, const std::string& name, int64_t line, int64_t min,
                  int64_t max) const {
    const std::string& text = get(row, name, line);
    if (const auto value = whole_number(text, min, max)) return *value;
    throw DataError(path_, line,
                    fmt::format("{} must be a whole number from {} to {}, got '{}'", name, min, max, text));
  }

 private:
  std::string path_;
  std::map<std::string, size_t> index_;
  size_t width_ = 0;
};

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "2017-10-09 07:01:55" -> seconds since the epoch (UTC); nullopt when malformed.
std::optional<int64_t> parse_timestamp(const std::string& s) {
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':') return std::nullopt;
  auto field = [&](size_t pos, size_t len, int64_t lo, int64_t hi) {
    return whole_number(std::string_view(s).substr(pos, len), lo, hi);
  };
  const auto y = field(0, 4, 1970, 9999), mo = field(5, 2, 1, 12), d = field(8, 2, 1, 31), h = field(11, 2, 0, 23),
             mi = field(14, 2, 0, 59), se = field(17, 2, 0, 60);
  if (!y || !mo || !d || !h || !mi || !se) return std::nullopt;
  return days_from_civil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *se;
}

sched::Need need_of(const std::string& text, const std::string& path, int64_t line) {
  try {
    return sched::parse_need(text);
  } catch (const ConfigError& e) {
    throw DataError(path, line, e.what());
  }
}

// The smallest MIG profile of `catalog` (no media extensions) with at least `slices` compute slices.
std::string profile_with_compute(const gpu::GpuCatalog& catalog, int slices) {
  const gpu::MigProfile* best = nullptr;
  for (const auto& p : catalog.profiles) {
    if (p.media_extensions() || p.compute_slices < slices) continue;
    if (!best || p.compute_slices < best->compute_slices ||
        (p.compute_slices == best->compute_slices && p.memory_mib < best->memory_mib))
      best = &p;
  }
  return best->name;  // the whole-GPU profile always qualifies
}

}  // namespace

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

Workload read_philly(const std::string& path) {
  LineReader in(path);
  const Columns cols(in, {"timestamp", "duration", "num_gpus"});
  Workload w;
  std::vector<int64_t> stamps;
  std::string line;
  while (in.next(line)) {
    if (line.empty()) continue;
    const auto row = split_csv(line);
    const int64_t n = in.line_number();
    const auto stamp = parse_timestamp(cols.get(row, "timestamp", n));
    if (!stamp) throw DataError(path, n, "timestamp must look like 2017-10-09 07:01:55, got '" +
                                             cols.get(row, "timestamp", n) + "'");
    SimJob job;
    job.iterations = cols.number(row, "duration", n, 0);
    job.estimate_s = job.iterations;
    const int64_t gpus = cols.integer(row, "num_gpus", n, 1, 100000);
    job.need = need_of(fmt::format("gpu:{}", gpus), path, n);
    job.name = fmt::format("philly-{}", n - 1);
    stamps.push_back(*stamp);
    w.jobs.push_back(std::move(job));
  }
  if (w.jobs.empty()) throw DataError(path, in.line_number(), "no jobs");
  const int64_t first = *std::min_element(stamps.begin(), stamps.end());
  for (size_t i = 0; i < w.jobs.size(); ++i) w.jobs[i].arrival = static_cast<double>(stamps[i] - first);
  sort_by_arrival(w.jobs);
  return w;
}

Workload read_openb(const std::string& path, const Cluster& cluster, double exponent) {
  LineReader in(path);
  const Columns cols(in, {"name", "num_gpu", "gpu_milli", "qos", "creation_time", "deletion_time", "scheduled_time"});
  const gpu::GpuCatalog* mig = nullptr;
  for (const auto& g : cluster.gpus)
    if (g.mig != MigMode::Off) {
      mig = g.catalog;
      break;
    }
  static const std::map<std::string, int64_t> kQos = {{"Guaranteed", 3}, {"LS", 2}, {"Burstable", 1}, {"BE", 0}};
  Workload w;
  int64_t cpu_only = 0, never_scheduled = 0;
  std::string line;
  while (in.next(line)) {
    if (line.empty()) continue;
    const auto row = split_csv(line);
    const int64_t n = in.line_number();
    const int64_t gpus = cols.integer(row, "num_gpu", n, 0, 100000);
    const double milli = cols.number(row, "gpu_milli", n, 0);
    const std::string& qos = cols.get(row, "qos", n);
    const auto q = kQos.find(qos);
    if (q == kQos.end()) throw DataError(path, n, "qos must be one of Guaranteed, LS, Burstable, BE, got '" + qos + "'");
    const double created = cols.number(row, "creation_time", n, 0);
    const double deleted = cols.number(row, "deletion_time", n, 0);
    if (gpus == 0) {
      ++cpu_only;
      continue;
    }
    if (cols.get(row, "scheduled_time", n).empty()) {
      ++never_scheduled;
      continue;
    }
    const double scheduled = cols.number(row, "scheduled_time", n, 0);
    if (deleted < scheduled) throw DataError(path, n, "deletion_time is before scheduled_time");
    if (scheduled < created) throw DataError(path, n, "scheduled_time is before creation_time");
    if (milli <= 0 || milli > 1000) throw DataError(path, n, fmt::format("gpu_milli must be in (0, 1000], got {}", milli));
    SimJob job;
    job.name = cols.get(row, "name", n);
    job.arrival = created;
    job.priority = q->second;
    const double duration = deleted - scheduled;
    if (gpus == 1 && milli < 1000) {
      const double share = milli / 1000.0;
      job.iterations = duration * std::pow(share, exponent);
      job.need = need_of(mig ? profile_with_compute(*mig, static_cast<int>(std::ceil(share * 7 - 1e-9))) + ":1" : "gpu:1",
                         path, n);
    } else {
      job.iterations = duration;
      job.need = need_of(fmt::format("gpu:{}", gpus), path, n);
    }
    job.estimate_s = job.iterations;
    w.jobs.push_back(std::move(job));
  }
  if (cpu_only) w.notes.push_back(fmt::format("{} pods without a GPU left out", cpu_only));
  if (never_scheduled) w.notes.push_back(fmt::format("{} pods never scheduled (no run time) left out", never_scheduled));
  sort_by_arrival(w.jobs);
  return w;
}

Workload read_jobs_csv(const std::string& path) {
  LineReader in(path);
  const Columns cols(in, {"arrival_s", "name", "type", "iterations", "slots", "priority", "estimate_s"});
  Workload w;
  std::string line;
  while (in.next(line)) {
    if (line.empty()) continue;
    const auto row = split_csv(line);
    const int64_t n = in.line_number();
    SimJob job;
    job.arrival = cols.number(row, "arrival_s", n, 0);
    job.name = cols.get(row, "name", n);
    if (job.name.empty()) throw DataError(path, n, "name is empty");
    job.type = cols.get(row, "type", n);
    job.iterations = cols.number(row, "iterations", n, 0);
    job.need = need_of(cols.get(row, "slots", n), path, n);
    job.priority = cols.integer(row, "priority", n, -1'000'000, 1'000'000);
    job.estimate_s = cols.number(row, "estimate_s", n, 0);
    w.jobs.push_back(std::move(job));
  }
  sort_by_arrival(w.jobs);
  return w;
}

std::string format_jobs_csv(const std::vector<SimJob>& jobs) {
  std::string out = "arrival_s,name,type,iterations,slots,priority,estimate_s\n";
  for (const auto& j : jobs)
    out += fmt::format("{},{},{},{},{},{},{}\n", j.arrival, j.name, j.type, j.iterations, sched::to_string(j.need),
                       j.priority, j.estimate_s);
  return out;
}

}  // namespace ragmig::sim
