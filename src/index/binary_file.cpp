// The checksummed file envelope (see binary_file.h).
#include "index/binary_file.h"

#include "core/atomic_file.h"
#include "core/error.h"

namespace ragmig::index {

const char* ByteReader::take(uint64_t n) {
  if (n > bytes_.size() - pos_) fail("truncated (needs " + std::to_string(n) + " more bytes at offset " +
                                     std::to_string(pos_) + ")");
  const char* p = bytes_.data() + pos_;
  pos_ += n;
  return p;
}

void ByteReader::fail(const std::string& what) const { throw DataError(file_ + ": " + what); }

void write_envelope(const std::string& path, std::string_view magic, uint32_t version, std::string_view payload) {
  RAGMIG_CHECK(magic.size() == 8, "envelope magic must be 8 bytes");
  ByteWriter w;
  w.raw(magic.data(), magic.size());
  w.pod<uint32_t>(version);
  w.pod<uint64_t>(payload.size());
  w.raw(payload.data(), payload.size());
  w.pod<uint32_t>(crc32_of(payload));
  write_file_atomic(path, w.bytes());
}

std::string read_envelope(const std::string& path, std::string_view magic, const std::string& what,
                          uint32_t max_version, uint32_t* version) {
  const std::string bytes = read_file(path);
  ByteReader r(bytes, path);
  if (bytes.size() < magic.size() || std::string_view(bytes).substr(0, magic.size()) != magic)
    throw DataError(path + ": not a " + what + " (wrong magic bytes)");
  r.take(magic.size());
  const uint32_t v = r.pod<uint32_t>();
  if (v == 0 || v > max_version)
    throw DataError(path + ": " + what + " format version " + std::to_string(v) + " is not supported (this build reads up to " +
                    std::to_string(max_version) + ")");
  const uint64_t size = r.pod<uint64_t>();
  const char* payload = r.take(size);
  const uint32_t crc = r.pod<uint32_t>();
  if (!r.at_end()) throw DataError(path + ": trailing bytes after the " + what);
  std::string out(payload, size);
  if (crc32_of(out) != crc) throw DataError(path + ": checksum mismatch: the " + what + " is corrupt");
  if (version) *version = v;
  return out;
}

}  // namespace ragmig::index
