// Cluster specs: parsing, printing, and the slots they give the scheduler.
#include "sim/cluster.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "core/strings.h"
#include "exec/queue_partition.h"
#include "gpu/mig_catalog.h"

namespace ragmig::sim {
namespace {

// GPUs without MIG and their memory, for whole-GPU pools; MIG models come from the gpu catalog.
struct WholeModel {
  const char* name;
  int memory_gb;
};
constexpr WholeModel kWholeModels[] = {{"K80", 12},  {"P40", 24}, {"P100", 16}, {"T4", 16},  {"V100", 32},
                                       {"V100-16GB", 16}, {"V100-32GB", 32}, {"A10", 24}, {"L4", 24}, {"L40S", 48}};

std::string known_models() {
  std::string out;
  for (const auto& m : kWholeModels) out += std::string(out.empty() ? "" : ", ") + m.name;
  for (const auto& c : gpu::gpu_catalogs()) out += ", " + c.name;
  return out + ", cpu";
}

const WholeModel* find_whole_model(const std::string& name) {
  for (const auto& m : kWholeModels)
    if (name == m.name) return &m;
  return nullptr;
}

Pool parse_pool(const std::string& text, const std::string& whole) {
  auto bad = [&](const std::string& why) {
    return ConfigError(fmt::format("cluster '{}': pool '{}': {} (expected <count>x<model>[:mig=<mix>|auto], e.g. "
                                   "8xH200:mig=7x1g.18gb)",
                                   whole, text, why));
  };
  Pool pool;
  const size_t x = text.find('x');
  if (x == std::string::npos || x == 0) throw bad("no count");
  const auto count = whole_number(std::string_view(text).substr(0, x), 1, 1'000'000);
  if (!count) throw bad("the count must be a whole number from 1");
  pool.count = static_cast<int>(*count);
  const size_t colon = text.find(':', x);
  pool.model = text.substr(x + 1, colon == std::string::npos ? std::string::npos : colon - x - 1);
  const gpu::GpuCatalog* catalog = gpu::find_gpu_catalog(pool.model);
  if (pool.model != "cpu" && !find_whole_model(pool.model) && !catalog)
    throw bad("unknown model '" + pool.model + "' (known: " + known_models() + ")");
  if (colon == std::string::npos) return pool;
  const std::string option = text.substr(colon + 1);
  if (!option.starts_with("mig=")) throw bad("unknown option '" + option + "'");
  if (!catalog) throw bad("'" + pool.model + "' has no MIG");
  const std::string mix = option.substr(4);
  if (mix == "auto") {
    pool.mig = MigMode::Auto;
    return pool;
  }
  pool.mig = MigMode::Fixed;
  try {
    const gpu::ProfileMix parsed = gpu::parse_mix(*catalog, mix);
    if (parsed.empty()) throw ConfigError("no instances");
    pool.mix = gpu::to_string(*catalog, parsed);
  } catch (const ConfigError& e) {
    throw bad(std::string("mig: ") + e.what());
  }
  return pool;
}

// The first valid layout (in enumeration order) whose instances are exactly `mix`.
gpu::Layout place_mix(const gpu::GpuCatalog& catalog, const gpu::ProfileMix& mix) {
  for (const auto& layout : gpu::enumerate_layouts(catalog))
    if (gpu::mix_of(layout) == mix) return layout;
  throw ConfigError(fmt::format("MIG mix '{}' does not fit one {}", gpu::to_string(catalog, mix), catalog.name));
}

}  // namespace

ClusterSpec parse_cluster_spec(const std::string& text) {
  if (text.empty()) throw ConfigError("empty cluster spec (expected e.g. 1000xV100 or 8xH200:mig=auto)");
  ClusterSpec spec;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    spec.pools.push_back(parse_pool(text.substr(start, comma - start), text));
    start = comma + 1;
  }
  return spec;
}

std::string to_string(const ClusterSpec& spec) {
  std::string out;
  for (const auto& p : spec.pools) {
    if (!out.empty()) out += ",";
    out += fmt::format("{}x{}", p.count, p.model);
    if (p.mig == MigMode::Auto) out += ":mig=auto";
    if (p.mig == MigMode::Fixed) out += ":mig=" + p.mix;
  }
  return out;
}

bool Cluster::has_auto() const {
  return std::any_of(gpus.begin(), gpus.end(), [](const SimGpu& g) { return g.mig == MigMode::Auto; });
}

Cluster build_cluster(const ClusterSpec& spec) {
  Cluster cluster;
  for (const auto& pool : spec.pools) {
    if (pool.model == "cpu") {
      cluster.cpu_slots += pool.count;
      continue;
    }
    SimGpu proto;
    proto.model = pool.model;
    proto.mig = pool.mig;
    proto.catalog = gpu::find_gpu_catalog(pool.model);
    if (const WholeModel* w = find_whole_model(pool.model)) proto.memory_mb = int64_t{w->memory_gb} * 1024;
    else proto.memory_mb = int64_t{proto.catalog->memory_gb} * 1024;
    if (pool.mig == MigMode::Fixed) proto.layout = place_mix(*proto.catalog, gpu::parse_mix(*proto.catalog, pool.mix));
    for (int i = 0; i < pool.count; ++i) {
      proto.index = static_cast<int>(cluster.gpus.size());
      cluster.gpus.push_back(proto);
    }
  }
  return cluster;
}

std::string mig_slot_id(const SimGpu& gpu, const gpu::Placement& p) {
  return fmt::format("gpu{}/{}@{}", gpu.index, gpu.catalog->profiles[static_cast<size_t>(p.profile)].name, p.start);
}

std::vector<sched::Slot> gpu_slots(const SimGpu& gpu, const gpu::Layout& layout) {
  std::vector<sched::Slot> out;
  if (gpu.mig == MigMode::Off) {
    sched::Slot s;
    s.id = fmt::format("gpu{}", gpu.index);
    s.kind = sched::SlotKind::Gpu;
    s.profile = gpu.model;
    s.compute = 7;
    s.memory_mb = gpu.memory_mb;
    s.group = gpu.index / 8;
    out.push_back(std::move(s));
    return out;
  }
  for (const auto& p : layout) {
    const auto& profile = gpu.catalog->profiles[static_cast<size_t>(p.profile)];
    sched::Slot s = exec::mig_slot(profile);
    s.id = mig_slot_id(gpu, p);
    s.group = gpu.index;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<sched::Slot> cluster_slots(const Cluster& cluster) {
  std::vector<sched::Slot> out;
  for (const auto& g : cluster.gpus) {
    auto slots = gpu_slots(g, g.layout);
    for (auto& s : slots) s.reshapable = g.mig == MigMode::Auto;
    out.insert(out.end(), std::make_move_iterator(slots.begin()), std::make_move_iterator(slots.end()));
  }
  for (int k = 0; k < cluster.cpu_slots; ++k) {
    sched::Slot s;
    s.id = fmt::format("cpu{}", k);
    s.group = static_cast<int>(cluster.gpus.size() / 8) + 1;  // hosts of GPUs come first
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ragmig::sim
