// Incremental reading of a worker's events.jsonl: complete lines after a byte offset. A line the worker
// is still writing (no newline yet) waits for the next read, so nothing is read half or twice.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ragmig::exec {

struct TailResult {
  std::vector<std::string> lines;
  int64_t offset = 0;  ///< just after the last complete line read
};

/// Reads complete lines of `path` from `offset` (at most `max_bytes`). A missing file gives no lines; a
/// file shorter than `offset` (replaced) is read from the start. Throws IoError if it cannot be read.
TailResult read_new_lines(const std::string& path, int64_t offset, int64_t max_bytes = 4 << 20);

}  // namespace ragmig::exec
