// pread from the offset; cut at the last newline.
#include "exec/event_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace ragmig::exec {

TailResult read_new_lines(const std::string& path, int64_t offset, int64_t max_bytes) {
  TailResult out;
  out.offset = offset;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return out;
    throw IoError(path + ": " + std::strerror(errno));
  }
  struct stat st {};
  ::fstat(fd, &st);
  if (st.st_size < offset) offset = out.offset = 0;
  const int64_t want = std::min<int64_t>(st.st_size - offset, max_bytes);
  std::string buf(static_cast<size_t>(std::max<int64_t>(want, 0)), '\0');
  int64_t got = 0;
  while (got < want) {
    const ssize_t n = ::pread(fd, buf.data() + got, static_cast<size_t>(want - got), offset + got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += n;
  }
  ::close(fd);
  buf.resize(static_cast<size_t>(got));
  size_t start = 0;
  for (size_t nl = buf.find('\n'); nl != std::string::npos; nl = buf.find('\n', start)) {
    if (nl > start) out.lines.push_back(buf.substr(start, nl - start));
    start = nl + 1;
  }
  out.offset = offset + static_cast<int64_t>(start);
  return out;
}

}  // namespace ragmig::exec
