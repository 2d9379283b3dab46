// Fuzzes the spec strings ragmig reads from its command line and its TOML files: the simulator's cluster and
// workload specs, MIG profile names, layouts, placements, mixes (on every GPU model of the catalog) and demands,
// a job's resource need, scheduling policies, BM25, dense-index and fusion specs. The first byte picks the
// grammar, the rest is the text. Every text ends in a ConfigError or in a value whose canonical string (to_string)
// parses again, to the same canonical string: what ragmig writes back (plans, reports, the scheduler's queue)
// must read back as it was.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "gpu/demand.h"
#include "gpu/layout.h"
#include "gpu/mig_catalog.h"
#include "index/bm25_spec.h"
#include "index/dense_spec.h"
#include "index/fusion_spec.h"
#include "sched/job.h"
#include "sched/policy.h"
#include "sim/cluster.h"
#include "sim/workload.h"

namespace {

using namespace ragmig;

// A grammar as text -> the canonical string (to_string) of what it parses to; the MIG ones on a GPU model.
struct Grammar {
  const char* name;
  bool per_gpu;
  std::function<std::string(const gpu::GpuCatalog&, const std::string&)> canonical;
};

template <typename Parse, typename Write>
Grammar grammar(const char* name, Parse parse, Write write) {
  return {name, false, [=](const gpu::GpuCatalog&, const std::string& s) { return write(parse(s)); }};
}
template <typename Parse, typename Write>
Grammar mig_grammar(const char* name, Parse parse, Write write) {
  return {name, true, [=](const gpu::GpuCatalog& g, const std::string& s) { return write(g, parse(g, s)); }};
}

const std::vector<Grammar>& grammars() {
  static const std::vector<Grammar> all = {
      mig_grammar("layout", gpu::parse_layout, [](auto& g, const gpu::Layout& l) { return gpu::to_string(g, l); }),
      mig_grammar("placement", gpu::parse_placement,
                  [](auto& g, const gpu::Placement& p) { return gpu::to_string(g, p); }),
      mig_grammar("mix", gpu::parse_mix, [](auto& g, const gpu::ProfileMix& m) { return gpu::to_string(g, m); }),
      grammar("profile name", gpu::parse_profile_name, [](const gpu::ProfileName& n) { return gpu::to_string(n); }),
      grammar("demands", gpu::parse_demands, [](const std::vector<gpu::Demand>& d) { return gpu::to_string(d); }),
      grammar("cluster", sim::parse_cluster_spec, [](const sim::ClusterSpec& c) { return sim::to_string(c); }),
      grammar("workload", sim::parse_workload_spec, [](const sim::WorkloadSpec& w) { return sim::to_string(w); }),
      grammar("need", sched::parse_need, [](const sched::Need& n) { return sched::to_string(n); }),
      grammar("policy", sched::parse_policy_spec, [](const sched::PolicySpec& p) { return sched::to_string(p); }),
      grammar("bm25", index::parse_bm25_spec, [](const index::Bm25Spec& b) { return index::to_string(b); }),
      grammar("fusion", index::parse_fusion_spec, [](const index::FusionSpec& f) { return index::to_string(f); }),
      grammar("dense", index::parse_dense_spec, [](const index::DenseSpec& d) { return index::to_string(d); }),
  };
  return all;
}

// The canonical form of `text` must parse again, to the same canonical string.
void round_trip(const Grammar& g, const gpu::GpuCatalog& gpu, const std::string& text) {
  const std::string canonical = g.canonical(gpu, text);
  std::string again;
  try {
    again = g.canonical(gpu, canonical);
  } catch (const ConfigError& e) {
    fuzz::finding(g.name, ("the canonical form '" + canonical + "' does not parse: " + e.what()).c_str());
  }
  if (again != canonical) fuzz::finding(g.name, ("'" + canonical + "' reads back as '" + again + "'").c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Grammar& g = grammars()[data[0] % grammars().size()];
  for (const gpu::GpuCatalog& gpu : gpu::gpu_catalogs()) {
    fuzz::expect_typed_errors([&] { round_trip(g, gpu, text); });
    if (!g.per_gpu) break;
  }
  return 0;
}
