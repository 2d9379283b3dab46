// Fuzzes what a job leaves in its run folder, as ragmig reads it: a worker's events.jsonl (exec's tail of complete
// lines, read from the start and from an offset the input's first byte picks; each line through the protocol's
// reader, sched::read_job_event, into the scheduler's work pricer and the monitor's JobWatch, and the ETA computed
// from what was folded; a GPU worker's memory report as the scheduler's memory model reads it), the shim's exit
// file (exec::read_attempt_exit) and an evaluation's result (hpo::eval_scores): the job's own command can write
// any of them.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "exec/event_tail.h"
#include "exec/process_executor.h"
#include "fuzz_support.h"
#include "hpo/eval_scores.h"
#include "monitor/job_watch.h"
#include "sched/job_event.h"
#include "sched/memory_model.h"
#include "sched/work_pricer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ragmig::fuzz::write_input("run/events.jsonl", data, size);
  const int64_t offset = size ? data[0] % 64 : 0;
  const ragmig::sched::JobSpec::Work work{.flops = 3e15, .step_flops = 1e13, .batch_size = 32, .steps = 300,
                                          .eval_steps = {100, 200}};
  for (const int64_t from : {int64_t{0}, offset}) {
    ragmig::fuzz::expect_typed_errors([&] {
      const auto tail = ragmig::exec::read_new_lines(path, from, 1 << 16);
      ragmig::monitor::JobWatch watch;
      ragmig::sched::WorkPricer pricer;
      double at = 0;
      for (const auto& line : tail.lines) {
        const auto event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        ragmig::monitor::fold_event(watch, event, at += 1);
        pricer.on_event(1, work, event, 1.5, at);
        pricer.new_estimate(1, work, 3600, 1e12);
        // The scheduler's memory model from a GPU worker's report (sched/memory_model.h).
        const ragmig::sched::JobEvent e = ragmig::sched::read_job_event(event);
        if (e.memory_mb && e.state_memory_mb) {
          const auto model = ragmig::sched::learned_memory(*e.memory_mb, *e.state_memory_mb, 64);
          ragmig::sched::largest_batch_within(model, 18432, 1, 1 << 20, 2);
          ragmig::sched::after_out_of_memory(model, 18432, 16);
        }
      }
      ragmig::monitor::fold_attempt_end(watch, "failed", 1, 0, at + 1);
      ragmig::monitor::eta_seconds(watch);
    });
  }
  // The same bytes as the shim's exit file and as an evaluation's result (a DataError is its refusal).
  ragmig::fuzz::expect_typed_errors([&] { ragmig::exec::read_attempt_exit(path); });
  ragmig::fuzz::expect_typed_errors([&] {
    const auto result = nlohmann::json::parse(std::string(reinterpret_cast<const char*>(data), size), nullptr, false);
    ragmig::hpo::eval_scores(result, "ndcg@10", path);
  });
  return 0;
}
