// Fuzzes MIG plan files (gpu/plan_file.cpp): what `ragmig mig plan` writes and `ragmig mig apply` reads back;
// a plan it accepts, written again, must read back as itself.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "gpu/plan_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ragmig::fuzz::write_input("plan.json", data, size);
  ragmig::fuzz::expect_typed_errors([&] {
    const auto plan = ragmig::gpu::read_plan_file(path);
    const auto written = ragmig::gpu::plan_to_json(plan);
    ragmig::fuzz::expect_round_trip("plan_file", written.dump(), [&] {
      return ragmig::gpu::plan_to_json(ragmig::gpu::plan_from_json(written, "round trip")).dump();
    });
  });
  return 0;
}
