// Fuzzes the sweep file of `ragmig batch` (hpo/sweep_spec.cpp): [sweep], [space], [eval], [asha]; a grid is
// expanded while reading, and the spec's JSON (what a resumed sweep compares) is built from what was read.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "hpo/sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;  // a grid's size grows with the text; long files only slow the search
  const std::string text(reinterpret_cast<const char*>(data), size);
  ragmig::fuzz::expect_typed_errors([&] {
    const auto spec = ragmig::hpo::parse_sweep(text, "/fuzz/sweep.toml");
    ragmig::hpo::to_json(spec).dump();
  });
  return 0;
}
