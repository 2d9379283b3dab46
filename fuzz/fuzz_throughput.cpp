// Fuzzes the simulator's throughput tables (sim/throughput.cpp: MISO's measurements and those ragmig writes from
// real runs, `ragmig sim --throughputs FILE`). Every text ends in a DataError or in a table that ragmig writes back
// (format_throughput_table) and reads again unchanged, whose model prices every type on every slot at a positive,
// finite time.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "sim/throughput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ragmig::sim;
  const std::string text(reinterpret_cast<const char*>(data), size);
  ragmig::fuzz::expect_typed_errors([&] {
    const ThroughputTable table = parse_throughput_table(text, "throughput.txt");
    const std::string written = format_throughput_table(table);
    ThroughputTable again;
    try {
      again = parse_throughput_table(written, "written");
    } catch (const ragmig::DataError& e) {
      ragmig::fuzz::finding("throughput", ("a written table does not read back: " + std::string(e.what())).c_str());
    }
    if (again != table) ragmig::fuzz::finding("throughput", "a written table reads back as another");
    // Each type on every slice size, on a whole GPU and on a CPU slot, measured or not: the fitted power law
    // included (a table of extreme times must not price a slot at 0, infinity or NaN).
    const ThroughputModel model = make_throughput_model({table});
    for (const auto& [type, slots] : table)
      for (int compute = 0; compute <= 8; ++compute) {
        SlotShape slot;
        slot.profile = compute == 0 ? "cpu" : compute == 8 ? slots.begin()->first : "unmeasured";
        slot.kind = compute == 0 ? ragmig::sched::SlotKind::Cpu : ragmig::sched::SlotKind::Gpu;
        slot.compute = compute == 8 ? std::max(1, profile_compute(slot.profile)) : std::max(1, compute);
        const double t = seconds_per_iteration(model, type, slot);
        if (!(t > 0) || !std::isfinite(t))
          ragmig::fuzz::finding("throughput", (type + " on " + slot.profile + " (" + std::to_string(slot.compute) +
                                               " slices) is priced at " + std::to_string(t) + " s").c_str());
      }
  });
  return 0;
}
