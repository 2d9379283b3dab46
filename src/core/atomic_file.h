// Writes that must survive a crash: the bytes go to a temporary file beside the target, are fsync'ed, and
// are renamed into place, so a reader sees the old file or the whole new one, never half of it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace ragmig {

/// Writes `bytes` to `path` atomically (temp file + fsync + rename + fsync of the folder). Throws IoError.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

/// Reads a whole file. Throws IoError naming the path.
std::string read_file(const std::filesystem::path& path);

/// CRC-32 (zlib's polynomial) of `bytes`, for checksums of checkpoints.
uint32_t crc32_of(std::string_view bytes);

}  // namespace ragmig
