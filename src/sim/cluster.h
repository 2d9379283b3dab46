// Cluster spec strings for the simulator ("1000xV100", "64xA100-40GB", "8xH200:mig=7x1g.18gb",
// "8xH200:mig=auto", "3xcpu", pools joined by ',') and the GPUs and scheduler slots they describe.
// Specs round-trip: to_string(parse_cluster_spec(s)) == s for specs written in canonical form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/layout.h"
#include "sched/slot.h"

namespace ragmig::sim {

enum class MigMode { Off, Fixed, Auto };

/// `count` machines of one model: GPUs (whole, with a fixed MIG layout, or partitioned by the planner)
/// or CPU slots (model "cpu").
struct Pool {
  int count = 1;
  std::string model;      ///< as written: "V100", "A100-40GB", "H200", "cpu"
  MigMode mig = MigMode::Off;
  std::string mix;        ///< MigMode::Fixed: the canonical profile mix ("7x1g.18gb", "3g.71gb+4x1g.18gb")
};

struct ClusterSpec {
  std::vector<Pool> pools;
};

/// Parses "<count>x<model>[:mig=<mix>|auto]" pools joined by ','. Models: the MIG catalog's (A30, A100-40GB,
/// A100-80GB, H100, H200, ...), whole-GPU-only models (K80, P40, P100, T4, V100, V100-16GB, A10, L4, L40S),
/// and "cpu". Throws ConfigError naming the bad part and what was expected.
ClusterSpec parse_cluster_spec(const std::string& text);
std::string to_string(const ClusterSpec& spec);

/// One GPU of a built cluster.
struct SimGpu {
  int index = 0;                              ///< across the whole cluster
  std::string model;
  const gpu::GpuCatalog* catalog = nullptr;   ///< set for MIG models (needed when mig != Off)
  int64_t memory_mb = 0;
  MigMode mig = MigMode::Off;
  gpu::Layout layout;                         ///< MIG layout at the start (empty for Off and Auto)
};

struct Cluster {
  std::vector<SimGpu> gpus;
  int cpu_slots = 0;
  /// Capacity in compute slices: 7 per GPU (MIG or not, so a whole-GPU and a MIG cluster compare), 1 per
  /// CPU slot. Utilisation is busy slice-time over capacity x time.
  int capacity() const { return 7 * static_cast<int>(gpus.size()) + cpu_slots; }
  bool has_auto() const;
};

/// The GPUs of a spec; a fixed MIG mix is laid out at the first valid placement of its instances.
/// Throws ConfigError when a mix cannot be placed on its GPU.
Cluster build_cluster(const ClusterSpec& spec);

/// The scheduler slots of one GPU in its layout: a whole GPU ("gpu<i>", 7 compute slices, speed 1, in host
/// group i/8: eight GPUs per host, as in the DGX machines of the traces) or one slot per MIG instance
/// ("gpu<i>/<profile>@<start>", its compute slices, speed slices/7 as `ragmig run` gives MIG slots, in
/// group i). A slice's memory is the size its profile name gives (18 GB for 1g.18gb): the same reading of
/// the name that sched::parse_need makes of a job asking for "1g.18gb".
std::vector<sched::Slot> gpu_slots(const SimGpu& gpu, const gpu::Layout& layout);
/// The id gpu_slots gives the MIG instance `p` of `gpu`: "gpu<i>/<profile>@<start>".
std::string mig_slot_id(const SimGpu& gpu, const gpu::Placement& p);
/// Every slot of the cluster in its starting layouts (CPU slots "cpu<k>" last).
std::vector<sched::Slot> cluster_slots(const Cluster& cluster);

}  // namespace ragmig::sim
