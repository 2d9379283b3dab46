// zlib's gzread reads plain files transparently, so one code path serves .jsonl and .jsonl.gz.
#include "core/line_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace ragmig {

struct LineReader::Impl {
  gzFile file = nullptr;
  std::string buffer;  // bytes read but not yet returned
  size_t pos = 0;
  bool eof = false;
};

LineReader::LineReader(const std::string& path) : impl_(std::make_unique<Impl>()), path_(path) {
  if (std::filesystem::is_directory(path)) throw InputFileError(path + ": is a folder, expected a file");
  impl_->file = gzopen(path.c_str(), "rb");
  if (!impl_->file) throw InputFileError(path + ": cannot open for reading (" + std::strerror(errno) + ")");
  gzbuffer(impl_->file, 1 << 17);
}

LineReader::~LineReader() {
  if (impl_->file) gzclose(impl_->file);
}

bool LineReader::next(std::string& line) {
  Impl& s = *impl_;
  line.clear();
  for (;;) {
    size_t nl = s.buffer.find('\n', s.pos);
    if (nl != std::string::npos) {
      line.append(s.buffer, s.pos, nl - s.pos);
      s.pos = nl + 1;
      break;
    }
    line.append(s.buffer, s.pos, std::string::npos);
    s.buffer.clear();
    s.pos = 0;
    if (s.eof) {
      if (line.empty()) return false;
      break;
    }
    char chunk[1 << 16];
    int n = gzread(s.file, chunk, sizeof chunk);
    if (n < 0) {
      int errnum = 0;
      throw IoError(path_ + ": read failed: " + gzerror(s.file, &errnum));
    }
    if (n == 0) s.eof = true;
    s.buffer.assign(chunk, static_cast<size_t>(n));
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++line_number_;
  return true;
}

int64_t LineReader::file_offset() const { return static_cast<int64_t>(gzoffset(impl_->file)); }

std::string resolve_maybe_gz(const std::string& path) {
  if (std::filesystem::exists(path)) return path;
  if (std::filesystem::exists(path + ".gz")) return path + ".gz";
  throw InputFileError(path + ": no such file (nor " + path + ".gz)");
}

}  // namespace ragmig
