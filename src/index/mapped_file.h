// A read-only memory mapping of a whole file: index files are searched in place, so a process holds only the
// pages its searches touch, and they are the page cache's to drop and share between processes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ragmig::index {

class MappedFile {
 public:
  /// Throws IoError naming the path when it cannot be opened or mapped. An empty file maps to no bytes.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ragmig::index
