// Fuzzes the spec strings ragmig reads from its command line and its TOML files: the simulator's cluster and
// workload specs, MIG profile names, layouts, placements, mixes (on every GPU model of the catalog) and demands,
// a job's resource need, scheduling policies, BM25, dense-index and fusion specs. The first byte picks the
// grammar, the rest is the text. Every text ends in a ConfigError or in a value whose canonical string (to_string)
// parses again, to the same canonical string: what ragmig writes back (plans, reports, the scheduler's queue)
// must read back as it was.
#include <cstdint>
#include <string>
#include <string_view>

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

// parse(text), then parse(to_string(that)) must give the same canonical string.
template <typename Parse, typename Write>
void round_trip(const char* grammar, const std::string& text, Parse parse, Write write) {
  const std::string canonical = write(parse(text));
  std::string again;
  try {
    again = write(parse(canonical));
  } catch (const ConfigError& e) {
    fuzz::finding(grammar, ("the canonical form '" + canonical + "' does not parse: " + e.what()).c_str());
  }
  if (again != canonical)
    fuzz::finding(grammar, ("'" + canonical + "' reads back as '" + again + "'").c_str());
}

// The MIG grammars on every GPU model of the catalog.
void mig_grammar(int which, const std::string& text) {
  for (const gpu::GpuCatalog& gpu : gpu::gpu_catalogs()) {
    fuzz::expect_typed_errors([&] {
      switch (which) {
        case 0:
          round_trip("layout", text, [&](const std::string& s) { return gpu::parse_layout(gpu, s); },
                     [&](const gpu::Layout& l) { return gpu::to_string(gpu, l); });
          break;
        case 1:
          round_trip("placement", text, [&](const std::string& s) { return gpu::parse_placement(gpu, s); },
                     [&](const gpu::Placement& p) { return gpu::to_string(gpu, p); });
          break;
        default:
          round_trip("mix", text, [&](const std::string& s) { return gpu::parse_mix(gpu, s); },
                     [&](const gpu::ProfileMix& m) { return gpu::to_string(gpu, m); });
      }
    });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int grammar = data[0] % 12;
  if (grammar <= 2) {
    mig_grammar(grammar, text);
    return 0;
  }
  fuzz::expect_typed_errors([&] {
    switch (grammar) {
      case 3:
        round_trip("profile name", text, [](const std::string& s) { return gpu::parse_profile_name(s); },
                   [](const gpu::ProfileName& n) { return gpu::to_string(n); });
        break;
      case 4:
        round_trip("demands", text, [](const std::string& s) { return gpu::parse_demands(s); },
                   [](const std::vector<gpu::Demand>& d) { return gpu::to_string(d); });
        break;
      case 5:
        round_trip("cluster", text, [](const std::string& s) { return sim::parse_cluster_spec(s); },
                   [](const sim::ClusterSpec& c) { return sim::to_string(c); });
        break;
      case 6:
        round_trip("workload", text, [](const std::string& s) { return sim::parse_workload_spec(s); },
                   [](const sim::WorkloadSpec& w) { return sim::to_string(w); });
        break;
      case 7:
        round_trip("need", text, [](const std::string& s) { return sched::parse_need(s); },
                   [](const sched::Need& n) { return sched::to_string(n); });
        break;
      case 8:
        round_trip("policy", text, [](const std::string& s) { return sched::parse_policy_spec(s); },
                   [](const sched::PolicySpec& p) { return sched::to_string(p); });
        break;
      case 9:
        round_trip("bm25", text, [](const std::string& s) { return index::parse_bm25_spec(s); },
                   [](const index::Bm25Spec& b) { return index::to_string(b); });
        break;
      case 10:
        round_trip("fusion", text, [](const std::string& s) { return index::parse_fusion_spec(s); },
                   [](const index::FusionSpec& f) { return index::to_string(f); });
        break;
      default:
        round_trip("dense", text, [](const std::string& s) { return index::parse_dense_spec(s); },
                   [](const index::DenseSpec& d) { return index::to_string(d); });
    }
  });
  return 0;
}
