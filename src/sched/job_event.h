// One line of a worker's events.jsonl (the job protocol) as ragmig's readers take it: the scheduler, its pricer,
// the sweep driver, the simulator's measurements and the report. The lines are the worker's, and a worker is any
// command: a field is read only where it has the protocol's type, and anything else (a line that is not a JSON
// object, "event": 1, "step": "x") reads as absent, never as an error that would stop the reader.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ragmig::sched {

struct JobEvent {
  std::string kind;                        ///< "event": "start", "progress", "checkpoint", ...; "" when absent
  std::optional<int64_t> step, batch_size;  ///< integers
  std::optional<double> time, samples_per_s, loss, memory_mb, state_memory_mb;  ///< numbers
};

/// Pure: the protocol's fields of `event` (any JSON value).
JobEvent read_job_event(const nlohmann::json& event);

}  // namespace ragmig::sched
