// What pending jobs ask of a GPU: a MIG profile ("1g.18gb") or just an amount of memory, how many jobs,
// and their priority. Demand strings round-trip: "1g.18gb:5,3g.71gb:1", "20GiB:2@1" (2 jobs needing
// 20 GiB at priority 1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ragmig::gpu {

struct GpuCatalog;
struct MigProfile;

/// `count` jobs with the same needs. A job that names a profile runs only on an instance of that profile;
/// a job that names only memory runs on any instance with at least that much memory.
struct Demand {
  std::string profile;     ///< "1g.18gb", or "" when the job asks only for memory
  int64_t memory_mib = 0;  ///< least memory when `profile` is empty
  int count = 1;           ///< number of jobs
  int priority = 0;        ///< higher is placed first
  bool operator==(const Demand&) const = default;
};

/// Parses "TERM[,TERM...]" with TERM = WHAT[:COUNT][@PRIORITY] and WHAT = a profile name, <n>GiB or
/// <n>MiB. Throws ConfigError naming the bad term.
std::vector<Demand> parse_demands(std::string_view spec);
/// Canonical form: the count is always written, the priority only when it is not 0 ("1g.18gb:5").
std::string to_string(const Demand& demand);
std::string to_string(const std::vector<Demand>& demands);
/// What one job of `demand` asks for, without count and priority ("1g.18gb", "20GiB").
std::string what_of(const Demand& demand);

/// Whether an instance of `profile` can run a job of `demand`.
bool fits(const Demand& demand, const MigProfile& profile);

}  // namespace ragmig::gpu
