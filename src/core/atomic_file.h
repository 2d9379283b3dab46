// Writes that must survive a crash: the bytes go to a temporary file beside the target, are fsync'ed, and
// are renamed into place, so a reader sees the old file or the whole new one, never half of it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

namespace ragmig {

/// Writes `bytes` to `path` atomically (temp file + fsync + rename + fsync of the folder). Throws IoError.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);
/// The same for a file made of several pieces, written one after another (no copy of them joined).
void write_file_atomic(const std::filesystem::path& path, std::initializer_list<std::string_view> pieces);

/// A file written piece by piece (what is too big to join in memory first: a checkpoint streamed out of its
/// serialiser, a run file a query at a time) that commit() puts in place as write_file_atomic() does; destroyed
/// uncommitted (an exception mid-write), it removes its temporary and the target is untouched. Small pieces are
/// gathered into writes of up to 1 MiB; a larger piece is written as it is, not copied. Throws IoError.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(std::string_view bytes);
  /// fsync, rename into place, fsync of the folder; then removes stale temporaries of the same target.
  void commit();
  uint64_t size() const { return size_; }

 private:
  void abandon() noexcept;
  void write_through(std::string_view bytes);  // to the file now
  void flush();                                // the gathered pieces to the file

  std::filesystem::path path_, tmp_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string pending_;  // small pieces not written yet
};

/// Creates `dir` + ".tmp-<pid>", lets `fill` write into it, then renames it into place (swapping atomically with
/// an existing folder where the OS allows): a half-written folder never appears under `dir`, and a failed
/// `fill` leaves nothing behind. Throws IoError if the folder cannot be created or moved.
void write_folder_atomically(const std::string& dir, const std::function<void(const std::string& tmp)>& fill);

/// fsync of a folder (its entries: after files were renamed into it). Best effort: some file systems refuse.
void fsync_folder(const std::filesystem::path& folder);

/// Removes what writers killed before their rename left in `folder`: entries named <stem><separator><pid>
/// ("results.json.tmp.123", "model.tmp-77") whose stem starts with `stem_prefix` and whose process is gone.
/// Best effort, never throws; a live process's temporary (another writer at work) is left alone.
void remove_stale_temporaries(const std::filesystem::path& folder, std::string_view stem_prefix, std::string_view separator);

/// Reads a whole file. Throws IoError naming the path.
std::string read_file(const std::filesystem::path& path);

/// CRC-32 (zlib's polynomial) of `bytes`, for checksums of checkpoints; `previous` is the CRC of the bytes
/// before these, to checksum a file in pieces (crc32_of(b, crc32_of(a)) == crc32_of(a + b)).
uint32_t crc32_of(std::string_view bytes, uint32_t previous = 0);

}  // namespace ragmig
