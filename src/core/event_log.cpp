// Appends events with one write(2) per line (see event_log.h).
#include "core/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"

namespace ragmig {

namespace {

// The length of the file up to and including its last newline: what is left once a torn last line is dropped.
off_t complete_length(int fd, off_t size) {
  char buf[4096];
  for (off_t end = size; end > 0;) {
    const off_t begin = end > static_cast<off_t>(sizeof buf) ? end - static_cast<off_t>(sizeof buf) : 0;
    const ssize_t n = ::pread(fd, buf, static_cast<size_t>(end - begin), begin);
    if (n != end - begin) return size;  // unreadable: leave the file as it is
    for (ssize_t i = n - 1; i >= 0; --i)
      if (buf[i] == '\n') return begin + i + 1;
    end = begin;
  }
  return 0;
}

}  // namespace

EventLog::EventLog(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError(path + ": cannot open for appending: " + std::strerror(errno));
  // A writer killed inside write(2) (kill -9, a full disk) can leave half a line: drop it, so the next event
  // starts a line of its own and every line stays valid JSON.
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  if (size > 0) {
    const off_t keep = complete_length(fd_, size);
    if (keep < size && ::ftruncate(fd_, keep) != 0) {
      const std::string why = std::strerror(errno);
      ::close(fd_);
      throw IoError(path + ": cannot drop a torn last line: " + why);
    }
  }
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
