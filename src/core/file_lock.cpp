// flock(2) on a descriptor of our own: lock and probe.
#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace ragmig {

std::optional<FileLock> FileLock::try_acquire(const std::string& path, bool inheritable) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | (inheritable ? 0 : O_CLOEXEC), 0644);
  if (fd < 0) throw IoError(path + ": cannot open lock file: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return std::nullopt;
    throw IoError(path + ": cannot lock: " + std::strerror(err));
  }
  return FileLock(fd);
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool is_locked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool locked = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the probe's own lock if it got one
  return locked;
}

}  // namespace ragmig
