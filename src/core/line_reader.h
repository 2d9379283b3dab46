// Reads a text file line by line, plain or gzip-compressed (BEIR ships .jsonl.gz), keeping the line number
// so that every parse error can name file:line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace ragmig {

class LineReader {
 public:
  /// Opens `path`; gzip files are detected by their magic bytes, not their name. Throws IoError.
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// Reads the next line without its '\n' (and '\r'). Returns false at end of file.
  bool next(std::string& line);
  /// 1-based number of the line last returned by next().
  int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }
  /// Bytes of the file itself read so far (compressed ones for gzip; zlib reads ahead of next()).
  int64_t file_offset() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  int64_t line_number_ = 0;
};

/// Returns `path` if it exists, else `path + ".gz"` if that exists, else throws IoError naming both.
std::string resolve_maybe_gz(const std::string& path);

}  // namespace ragmig
