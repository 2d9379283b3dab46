// Fuzzes the job file of `ragmig submit` (sched/job.cpp, TOML): name, argv or cmd (split like shell words),
// slots, priority, estimate_s, max_retries; then the spec's JSON round trip through the store's reader, which must
// give the spec back.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "sched/job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ragmig::fuzz::write_input("job.toml", data, size);
  ragmig::fuzz::expect_typed_errors([&] {
    const auto spec = ragmig::sched::read_job_file(path);
    ragmig::sched::validate(spec);
    const nlohmann::json stored = ragmig::sched::to_json(spec);
    ragmig::fuzz::expect_round_trip("job_file", stored.dump(), [&] {
      return ragmig::sched::to_json(ragmig::sched::job_spec_from_json(stored, "round trip")).dump();
    });
  });
  return 0;
}
