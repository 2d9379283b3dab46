// Appends events with one write(2) per line (see event_log.h).
#include "core/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"

namespace ragmig {

EventLog::EventLog(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError(path + ": cannot open for appending: " + std::strerror(errno));
}

EventLog::~EventLog() {
  if (fd_ >= 0) ::close(fd_);
}

void EventLog::append(nlohmann::json event) {
  using namespace std::chrono;
  event["time"] = duration<double>(system_clock::now().time_since_epoch()).count();
  std::string line = event.dump() + "\n";
  ssize_t n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) throw IoError(path_ + ": append failed: " + std::strerror(errno));
}

}  // namespace ragmig
