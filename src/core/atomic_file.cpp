// POSIX implementation of atomic writes; the temp name carries the pid so concurrent writers never collide.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <signal.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/error.h"

namespace ragmig {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Puts `tmp` at `target`. With an existing target, RENAME_EXCHANGE swaps the two in one step, so readers see
// the old folder or the new one; where the file system refuses it, fall back to two renames.
void move_folder_into_place(const std::filesystem::path& tmp, const std::filesystem::path& target) {
  if (::rename(tmp.c_str(), target.c_str()) == 0) return;  // no folder there yet (or an empty one)
  if (errno != EEXIST && errno != ENOTEMPTY)
    throw IoError(target.string() + ": cannot rename " + tmp.string() + " into place: " + errno_text());
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);  // now the old folder
    return;
  }
  std::filesystem::path old = target;
  old += ".old-" + std::to_string(::getpid());
  std::error_code ec;
  std::filesystem::remove_all(old, ec);
  if (::rename(target.c_str(), old.c_str()) != 0 || ::rename(tmp.c_str(), target.c_str()) != 0)
    throw IoError(target.string() + ": cannot replace the folder: " + errno_text());
  std::filesystem::remove_all(old, ec);
}

}  // namespace

void fsync_folder(const std::filesystem::path& folder) {
  int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // best effort: some file systems refuse to open folders
  ::fsync(fd);
  ::close(fd);
}

void write_folder_atomically(const std::string& dir, const std::function<void(const std::string&)>& fill) {
  namespace fs = std::filesystem;
  fs::path target(dir);
  if (!target.has_filename()) target = target.parent_path();  // "out/model/" -> "out/model"
  fs::path tmp = target;
  tmp += ".tmp-" + std::to_string(::getpid());
  try {
    if (target.has_parent_path()) fs::create_directories(target.parent_path());
    fs::remove_all(tmp);
    fs::create_directory(tmp);
  } catch (const fs::filesystem_error& e) {
    throw IoError(tmp.string() + ": cannot create: " + e.what());
  }
  try {
    fill(tmp.string());
    fsync_folder(tmp);
    move_folder_into_place(tmp, target);
    fsync_folder(target.has_parent_path() ? target.parent_path() : fs::path("."));
    for (const char* separator : {".tmp-", ".old-"})
      remove_stale_temporaries(target.parent_path(), target.filename().string(), separator);
  } catch (const fs::filesystem_error& e) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw IoError(target.string() + ": cannot write folder: " + e.what());
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  write_file_atomic(path, std::initializer_list<std::string_view>{bytes});
}

void write_file_atomic(const std::filesystem::path& path, std::initializer_list<std::string_view> pieces) {
  AtomicFileWriter file(path);
  for (const std::string_view bytes : pieces) file.write(bytes);
  file.commit();
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
  tmp_ = path_;
  tmp_ += ".tmp." + std::to_string(::getpid());
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError(tmp_.string() + ": cannot create: " + errno_text());
}

AtomicFileWriter::~AtomicFileWriter() { abandon(); }

void AtomicFileWriter::abandon() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(tmp_.c_str());
  fd_ = -1;
}

void AtomicFileWriter::write(std::string_view bytes) {
  constexpr size_t kGather = size_t{1} << 20;
  if (fd_ < 0) throw IoError(tmp_.string() + ": written after it was committed or failed");
  if (pending_.size() + bytes.size() > kGather) flush();
  if (bytes.size() >= kGather)
    write_through(bytes);
  else
    pending_.append(bytes);
  size_ += bytes.size();
}

void AtomicFileWriter::flush() {
  write_through(pending_);
  pending_.clear();
}

void AtomicFileWriter::write_through(std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string err = errno_text();
      abandon();
      throw IoError(tmp_.string() + ": write failed: " + err);
    }
    done += static_cast<size_t>(n);
  }
}

void AtomicFileWriter::commit() {
  if (fd_ < 0) throw IoError(tmp_.string() + ": committed twice or after a failed write");
  flush();
  const int fd = std::exchange(fd_, -1);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string err = errno_text();
    ::unlink(tmp_.c_str());
    throw IoError(tmp_.string() + ": fsync/close failed: " + err);
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const std::string err = errno_text();
    ::unlink(tmp_.c_str());
    throw IoError(path_.string() + ": rename failed: " + err);
  }
  fsync_folder(path_.parent_path());
  remove_stale_temporaries(path_.parent_path(), path_.filename().string(), ".tmp.");
}

void remove_stale_temporaries(const std::filesystem::path& folder, std::string_view stem_prefix, std::string_view separator) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(folder.empty() ? "." : folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const size_t at = name.rfind(separator);
    if (at == std::string::npos || name.compare(0, stem_prefix.size(), stem_prefix) != 0) continue;
    const std::string pid = name.substr(at + separator.size());
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto p = static_cast<pid_t>(std::stol(pid));
    if (p == ::getpid() || ::kill(p, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    std::filesystem::remove_all(it->path(), ignored);
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputFileError(path.string() + ": cannot open for reading (" + std::strerror(errno) + ")");
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) throw IoError(path.string() + ": read failed");
  return std::move(out).str();
}

uint32_t crc32_of(std::string_view bytes, uint32_t previous) {
  uLong crc = previous;
  // zlib takes uInt lengths: feed large buffers in pieces.
  const size_t piece = 1u << 30;
  for (size_t off = 0; off < bytes.size(); off += piece) {
    size_t n = std::min(piece, bytes.size() - off);
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + off), static_cast<uInt>(n));
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace ragmig
