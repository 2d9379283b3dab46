// Fuzzes a worker's events.jsonl as the scheduler and the monitor read it: exec's tail of complete lines
// (read from the start and from an offset the input's first byte picks), each line parsed as the scheduler
// does, folded into the monitor's JobWatch, and the ETA computed from what was folded; a GPU worker's memory
// report as the scheduler's memory model reads it.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "exec/event_tail.h"
#include "fuzz_support.h"
#include "monitor/job_watch.h"
#include "sched/memory_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ragmig::fuzz::write_input("run/events.jsonl", data, size);
  const int64_t offset = size ? data[0] % 64 : 0;
  for (const int64_t from : {int64_t{0}, offset}) {
    ragmig::fuzz::expect_typed_errors([&] {
      const auto tail = ragmig::exec::read_new_lines(path, from, 1 << 16);
      ragmig::monitor::JobWatch watch;
      double at = 0;
      for (const auto& line : tail.lines) {
        const auto event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        ragmig::monitor::fold_event(watch, event, at += 1);
        // The scheduler's memory model from a GPU worker's report (sched/memory_model.h).
        if (event.is_object() && event.contains("memory_mb") && event["memory_mb"].is_number() &&
            event.contains("state_memory_mb") && event["state_memory_mb"].is_number()) {
          const auto model = ragmig::sched::learned_memory(event["memory_mb"].get<double>(),
                                                           event["state_memory_mb"].get<double>(), 64);
          ragmig::sched::largest_batch_within(model, 18432, 1, 1 << 20, 2);
          ragmig::sched::after_out_of_memory(model, 18432, 16);
        }
      }
      ragmig::monitor::fold_attempt_end(watch, "failed", 1, 0, at + 1);
      ragmig::monitor::eta_seconds(watch);
    });
  }
  return 0;
}
