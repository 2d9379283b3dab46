// Fuzzes a sweep's asha.jsonl as a restarted driver replays it (hpo/asha_log.cpp) into ASHA with rungs at 10, 30,
// 90, 270 and 810 steps of 1,000 (eta 3) for trials t00-t03. Every text ends in a DataError or in entries that,
// written back as the driver writes them, replay again to the same entries.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "hpo/asha_log.h"

namespace {

ragmig::hpo::Asha fresh_asha() { return ragmig::hpo::Asha({.min_steps = 10, .reduction_factor = 3, .max_steps = 1000}); }

std::string written(const std::vector<ragmig::hpo::AshaLogEntry>& entries) {
  std::string text;
  for (const auto& e : entries) text += to_json(e).dump() + "\n";
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::set<std::string> trials = {"t00", "t01", "t02", "t03"};
  ragmig::fuzz::expect_typed_errors([&] {
    auto asha = fresh_asha();
    const auto entries = replay_asha_log(text, "asha.jsonl", trials, asha);
    const std::string once = written(entries);
    auto again = fresh_asha();
    std::vector<ragmig::hpo::AshaLogEntry> replayed;
    try {
      replayed = replay_asha_log(once, "written", trials, again);
    } catch (const ragmig::DataError& e) {
      ragmig::fuzz::finding("asha_log", ("the entries written back do not replay: " + std::string(e.what())).c_str());
    }
    if (written(replayed) != once) ragmig::fuzz::finding("asha_log", "the entries written back replay to others");
  });
  return 0;
}
