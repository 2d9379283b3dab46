// The worker's side of the job protocol: one JSON object per line appended to <run>/events.jsonl.
// Each line is written with a single write(2) on an O_APPEND descriptor, so a reader never sees half a line
// from a live writer; a line torn by a writer's death is dropped when the log is next opened.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ragmig {

class EventLog {
 public:
  /// Opens (creating) `path` for appending; a torn last line (no newline: its writer died mid-write) is dropped
  /// first. Throws IoError.
  explicit EventLog(const std::string& path);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  /// Appends `event` plus a "time" field (seconds since the Unix epoch) as one line.
  void append(nlohmann::json event);

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace ragmig
