// Advisory whole-file locks (flock). The kernel drops a lock when the last descriptor holding it closes,
// also when its process is SIGKILLed, so a held lock is proof that a holder is alive: one scheduler per
// state folder, and "is this job's worker still running?" after a scheduler crash.
#pragma once

#include <optional>
#include <string>

namespace ragmig {

class FileLock {
 public:
  /// Creates `path` if needed and takes an exclusive lock without waiting; nullopt if another holds it.
  /// With `inheritable`, the descriptor survives exec, so a child process holds the lock too.
  /// Throws IoError when the file cannot be opened.
  static std::optional<FileLock> try_acquire(const std::string& path, bool inheritable = false);

  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  int fd() const { return fd_; }
  /// Closes this descriptor (the lock stays while a child still holds an inherited copy).
  void release();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

/// True if some process holds a lock on `path` (false if the file does not exist).
bool is_locked(const std::string& path);

}  // namespace ragmig
