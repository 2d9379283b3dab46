#include "sched/executor.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "core/atomic_file.h"

namespace ragmig::sched {

void Executor::request_batch_size(JobId /*job*/, const std::string& run_dir, int64_t batch_size) {
  std::filesystem::create_directories(run_dir);  // a job asked before its first start has no run folder yet
  write_file_atomic(std::filesystem::path(run_dir) / "control.json", nlohmann::json{{"batch_size", batch_size}}.dump() + "\n");
}

}  // namespace ragmig::sched
