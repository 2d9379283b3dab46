// The simulator's throughput model: seconds per iteration of a job type on a slot, from measured tables
// (MISO's A100 MIG measurements, and the measurements file ragmig writes from real runs), with a documented
// fallback for what was not measured. Pure functions of the tables.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/slot.h"

namespace ragmig::sim {

/// Seconds per iteration per job type and slot profile: table[type][profile]. A profile key is a MIG
/// profile ("1g.5gb", "7g.40gb"), "cpu", or a whole GPU's model name.
using ThroughputTable = std::map<std::string, std::map<std::string, double>>;

/// Reads a table: one job type per line, `<type> {"<profile>": <seconds per iteration>, ...}` (MISO's
/// format, which ragmig's measurements files use too); blank lines and lines starting with '#' are skipped.
/// Throws DataError naming file:line for a malformed line or a time outside 1e-9 .. 1e9 seconds.
ThroughputTable read_throughput_table(const std::string& path);
/// Parses the text of a table; `where` names it in errors.
ThroughputTable parse_throughput_table(const std::string& text, const std::string& where);
/// The text of a table in the same format, types and profiles sorted; parse(format(t)) == t.
std::string format_throughput_table(const ThroughputTable& table);

/// What the model needs to know of a slot: its kind, profile and compute slices.
struct SlotShape {
  sched::SlotKind kind = sched::SlotKind::Gpu;
  std::string profile;  ///< "1g.18gb", "cpu", or the GPU's model name
  int compute = 7;      ///< compute slices; a whole GPU counts as 7
};
SlotShape shape_of(const sched::Slot& slot);

/// Measured tables merged (later ones override earlier entries), plus the exponent of the fallback.
///
/// Lookup of seconds per iteration for (type, slot), first that applies:
///  1. the table has the type with the slot's exact profile;
///  2. a GPU slot, and the type was measured on a MIG profile with the same number of compute slices
///     (MISO measured A100-40GB slices; a slice of another model with as many compute slices is taken to be
///     as fast — the comparisons this model serves are between layouts of one GPU model);
///  3. a GPU slot, and the type was measured on GPU slices of other sizes: the power law t(g) ~ g^-b from the
///     nearest measured size, b fitted by least squares on log t against log g over its measured sizes
///     (b = fallback_exponent when it was measured at one size only);
///  4. a job type that was not measured on this kind of slot (Philly and Alibaba jobs have no type): its
///     iterations are seconds on a whole GPU (or a CPU slot), so t = 1 on a whole GPU or CPU slot and
///     t = (7 / g)^fallback_exponent on a slice of g compute slices.
/// fallback_exponent is the median of the per-type exponents of the tables (0.73 for MISO's table: a 1g
/// slice runs a typical job 4.1x slower than the whole GPU, not 7x), or 1 (speed proportional to compute
/// slices, the scheduler's own first-order model) when no type was measured at two sizes.
struct ThroughputModel {
  ThroughputTable table;
  double fallback_exponent = 1.0;
};

/// Merges the tables (later override earlier) and derives the fallback exponent from them.
ThroughputModel make_throughput_model(const std::vector<ThroughputTable>& tables);

/// Seconds per iteration of `type` on `slot` (always > 0), by the lookup documented on ThroughputModel.
double seconds_per_iteration(const ThroughputModel& model, const std::string& type, const SlotShape& slot);

/// The fitted exponent b of t(g) = a * g^-b over the GPU-slice entries of one type, or nullopt with fewer
/// than two distinct slice sizes.
std::optional<double> fitted_exponent(const std::map<std::string, double>& entries);

/// Compute slices of a MIG profile name ("3g.20gb" -> 3), or 0 when `profile` is not one.
int profile_compute(const std::string& profile);

}  // namespace ragmig::sim
