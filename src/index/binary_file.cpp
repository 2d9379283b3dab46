// The checksummed file envelope (see binary_file.h).
#include "index/binary_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

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
  ByteWriter header, trailer;
  header.raw(magic.data(), magic.size());
  header.pod<uint32_t>(version);
  header.pod<uint64_t>(payload.size());
  trailer.pod<uint32_t>(crc32_of(payload));
  write_file_atomic(path, {header.bytes(), payload, trailer.bytes()});  // the payload is not copied
}

namespace {

// An envelope's parts, its header (magic, version) and size checked; the checksum is the caller's to verify.
struct Envelope {
  uint32_t version = 0;
  std::string_view payload;
  uint32_t crc = 0;
};

Envelope split_envelope(const std::string& path, std::string_view bytes, std::string_view magic, const std::string& what,
                        uint32_t max_version) {
  if (bytes.size() < magic.size() || bytes.substr(0, magic.size()) != magic)
    throw DataError(path + ": not a " + what + " (wrong magic bytes)");
  ByteReader r(bytes, path);
  r.take(magic.size());
  Envelope e;
  e.version = r.pod<uint32_t>();
  if (e.version == 0 || e.version > max_version)
    throw DataError(path + ": " + what + " format version " + std::to_string(e.version) + " is not supported (this build reads up to " +
                    std::to_string(max_version) + ")");
  const auto size = r.pod<uint64_t>();
  e.payload = std::string_view(r.take(size), size);
  e.crc = r.pod<uint32_t>();
  if (!r.at_end()) throw DataError(path + ": trailing bytes after the " + what);
  return e;
}

// CRC-32 of the file's bytes [begin, begin + n), read in pieces.
uint32_t crc32_of_range(const std::string& path, uint64_t begin, uint64_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path + ": cannot open: " + std::strerror(errno));
  std::string buffer(1 << 20, '\0');
  uint32_t crc = 0;
  for (uint64_t done = 0; done < n;) {
    const auto want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), n - done));
    const ssize_t got = ::pread(fd, buffer.data(), want, static_cast<off_t>(begin + done));
    if (got <= 0) {
      const int err = errno;
      ::close(fd);
      throw IoError(path + ": cannot read: " + (got == 0 ? std::string("file shrank while read") : std::strerror(err)));
    }
    crc = crc32_of(std::string_view(buffer.data(), static_cast<size_t>(got)), crc);
    done += static_cast<uint64_t>(got);
  }
  ::close(fd);
  return crc;
}

}  // namespace

MappedEnvelope map_envelope(const std::string& path, std::string_view magic, const std::string& what,
                            uint32_t max_version) {
  RAGMIG_CHECK(magic.size() == 8, "envelope magic must be 8 bytes");
  MappedEnvelope out;
  out.file = std::make_shared<const MappedFile>(path);
  const std::string_view bytes = out.file->bytes();
  const Envelope e = split_envelope(path, bytes, magic, what, max_version);
  if (crc32_of_range(path, static_cast<uint64_t>(e.payload.data() - bytes.data()), e.payload.size()) != e.crc)
    throw DataError(path + ": checksum mismatch: the " + what + " is corrupt");
  out.payload = e.payload;
  out.version = e.version;
  return out;
}

std::string read_envelope(const std::string& path, std::string_view magic, const std::string& what,
                          uint32_t max_version, uint32_t* version) {
  const std::string bytes = read_file(path);
  const Envelope e = split_envelope(path, bytes, magic, what, max_version);
  if (crc32_of(e.payload) != e.crc) throw DataError(path + ": checksum mismatch: the " + what + " is corrupt");
  if (version) *version = e.version;
  return std::string(e.payload);
}

}  // namespace ragmig::index
