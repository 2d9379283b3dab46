// The on-disk envelope of ragmig's index files (BM25 indexes, FAISS indexes, embedding caches): an 8-byte
// magic, a format version, the payload and its CRC-32, written atomically. A reader names the file and what
// is wrong (wrong kind, newer version, truncated, checksum mismatch) instead of loading garbage.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "index/mapped_file.h"

namespace ragmig::index {

/// Appends native-endian scalars, strings and arrays to a byte string (files are read on the machine kind
/// that wrote them; the envelope's magic would not match on a big-endian reader).
class ByteWriter {
 public:
  template <typename T>
  void pod(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void str(std::string_view s) {
    pod<uint64_t>(s.size());
    bytes_.append(s);
  }
  template <typename T>
  void array(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    pod<uint64_t>(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void raw(const void* data, size_t n) { bytes_.append(static_cast<const char*>(data), n); }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

/// Reads what ByteWriter wrote; every overrun is a DataError naming `file` (a truncated or foreign file).
class ByteReader {
 public:
  ByteReader(std::string_view bytes, std::string file) : bytes_(bytes), file_(std::move(file)) {}
  template <typename T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  std::string str() {
    const uint64_t n = pod<uint64_t>();
    return std::string(take(n), n);
  }
  template <typename T>
  std::vector<T> array() {
    const uint64_t n = pod<uint64_t>();
    if (n > bytes_.size() / sizeof(T)) fail("array of " + std::to_string(n) + " items overruns the file");
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  const char* take(uint64_t n);
  bool at_end() const { return pos_ == bytes_.size(); }
  [[noreturn]] void fail(const std::string& what) const;
  const std::string& file() const { return file_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
  std::string file_;
};

/// Writes magic (exactly 8 bytes), version, payload size, payload and CRC-32 atomically. Throws IoError.
void write_envelope(const std::string& path, std::string_view magic, uint32_t version, std::string_view payload);

/// Reads a file written by write_envelope and returns its payload; *version gets the file's version.
/// Throws IoError when unreadable, DataError naming the path for a different magic ("not a <what>"), a
/// version above max_version, a truncated file or a checksum mismatch.
std::string read_envelope(const std::string& path, std::string_view magic, const std::string& what,
                          uint32_t max_version, uint32_t* version = nullptr);

/// An envelope read in place: the file mapped, its payload a view into the mapping.
struct MappedEnvelope {
  std::shared_ptr<const MappedFile> file;
  std::string_view payload;
  uint32_t version = 0;
};

/// read_envelope's checks and errors without reading the file into memory: the checksum is computed from
/// buffered reads, so the mapping's pages stay untouched until the payload is used.
MappedEnvelope map_envelope(const std::string& path, std::string_view magic, const std::string& what,
                            uint32_t max_version);

}  // namespace ragmig::index
