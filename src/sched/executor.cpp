#include "sched/executor.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "core/atomic_file.h"
#include "core/splitmix.h"

namespace ragmig::sched {

int rendezvous_port(const Launch& launch) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the run folder, then mixed with the attempt
  for (const unsigned char c : launch.run_dir) h = (h ^ c) * 1099511628211ull;
  const auto span = static_cast<uint64_t>(kRendezvousPortHi - kRendezvousPortLo);
  return kRendezvousPortLo + static_cast<int>(splitmix64(h ^ static_cast<uint64_t>(launch.attempt_id)) % span);
}

void Executor::request_batch_size(JobId /*job*/, const std::string& run_dir, int64_t batch_size) {
  std::filesystem::create_directories(run_dir);  // a job asked before its first start has no run folder yet
  write_file_atomic(std::filesystem::path(run_dir) / "control.json", nlohmann::json{{"batch_size", batch_size}}.dump() + "\n");
}

}  // namespace ragmig::sched
