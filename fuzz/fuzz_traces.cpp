// Fuzzes the simulator's trace readers (sim/traces.cpp): Philly (Pollux's CSV), Alibaba openb (onto a MIG
// cluster and a whole-GPU one) and ragmig's own jobs CSV, all on the same bytes; jobs it reads, written as CSV,
// must read back as the same CSV.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "sim/cluster.h"
#include "sim/traces.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto mig = ragmig::sim::build_cluster(ragmig::sim::parse_cluster_spec("1xH200:mig=auto"));
  static const auto whole = ragmig::sim::build_cluster(ragmig::sim::parse_cluster_spec("2xV100"));
  const std::string path = ragmig::fuzz::write_input("trace.csv", data, size);
  ragmig::fuzz::expect_typed_errors([&] { ragmig::sim::read_philly(path); });
  ragmig::fuzz::expect_typed_errors([&] { ragmig::sim::read_openb(path, mig, 0.7); });
  ragmig::fuzz::expect_typed_errors([&] { ragmig::sim::read_openb(path, whole, 0.5); });
  ragmig::fuzz::expect_typed_errors([&] {
    const auto w = ragmig::sim::read_jobs_csv(path);
    const std::string written = ragmig::sim::format_jobs_csv(w.jobs);
    ragmig::fuzz::expect_round_trip("jobs_csv", written, [&] {
      return ragmig::sim::format_jobs_csv(ragmig::sim::read_jobs_csv(ragmig::fuzz::write_input("again.csv", written)).jobs);
    });
  });
  return 0;
}
