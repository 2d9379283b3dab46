// Fuzzes the simulator's throughput tables (sim/throughput.cpp: MISO's measurements and those ragmig writes from
// real runs, `ragmig sim --throughputs FILE`). Every text ends in a DataError or in a table that ragmig writes back
// (format_throughput_table) and reads again unchanged, whose model prices every type on every slot at a positive,
// finite time.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

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
    // Each type on a CPU slot, on every slice size of a GPU it was not measured on (the fitted power law or the
    // fallback: a table of extreme times must not price a slot at 0, infinity or NaN) and on its first measured slot.
    const ThroughputModel model = make_throughput_model({table});
    for (const auto& [type, slots] : table) {
      std::vector<SlotShape> shapes = {{ragmig::sched::SlotKind::Cpu, "cpu", 1}};
      for (int g = 1; g <= 7; ++g) shapes.push_back({ragmig::sched::SlotKind::Gpu, "unmeasured", g});
      const std::string& measured = slots.begin()->first;
      shapes.push_back({ragmig::sched::SlotKind::Gpu, measured, std::max(1, profile_compute(measured))});
      for (const SlotShape& slot : shapes) {
        const double t = seconds_per_iteration(model, type, slot);
        if (!(t > 0) || !std::isfinite(t))
          ragmig::fuzz::finding("throughput", (type + " on " + slot.profile + " (" + std::to_string(slot.compute) +
                                               " slices) is priced at " + std::to_string(t) + " s").c_str());
      }
    }
  });
  return 0;
}
