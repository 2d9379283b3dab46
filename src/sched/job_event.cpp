// A worker's event line, each field read only with the protocol's type (see job_event.h).
#include "sched/job_event.h"

namespace ragmig::sched {
namespace {

std::optional<int64_t> integer(const nlohmann::json& event, const char* key) {
  const auto it = event.find(key);
  if (it == event.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::optional<double> number(const nlohmann::json& event, const char* key) {
  const auto it = event.find(key);
  if (it == event.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

JobEvent read_job_event(const nlohmann::json& event) {
  JobEvent out;
  if (!event.is_object()) return out;
  if (const auto kind = event.find("event"); kind != event.end() && kind->is_string()) out.kind = kind->get<std::string>();
  out.step = integer(event, "step");
  out.batch_size = integer(event, "batch_size");
  out.time = number(event, "time");
  out.samples_per_s = number(event, "samples_per_s");
  out.loss = number(event, "loss");
  out.memory_mb = number(event, "memory_mb");
  out.state_memory_mb = number(event, "state_memory_mb");
  return out;
}

}  // namespace ragmig::sched
