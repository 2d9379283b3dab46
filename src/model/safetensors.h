// Reads and writes the safetensors format (Hugging Face's weight files), torch-free so that tools without
// LibTorch can inspect model folders. Written from the format spec: an 8-byte little-endian header length,
// a JSON header naming each tensor's dtype, shape and byte range, then the raw little-endian data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ragmig::model {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

/// The spec's spelling: "F32", "BF16", "BOOL", ...
std::string to_string(DType dtype);
/// Inverse of to_string. Throws DataError for any other text.
DType parse_dtype(const std::string& text);
/// Bytes per element.
int64_t item_size(DType dtype);

struct RawTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  ///< empty = a 0-d (scalar) tensor with one element
  std::string bytes;           ///< little-endian, row-major, exactly numel * item_size bytes
};

/// Number of elements of `shape` (1 for a 0-d tensor). Throws DataError on negative dims or overflow.
int64_t element_count(const std::vector<int64_t>& shape);

struct SafetensorsFile {
  std::map<std::string, RawTensor> tensors;
  std::map<std::string, std::string> metadata;  ///< the "__metadata__" entry; omitted from the file if empty
};

/// Header lengths above this are refused on read (the reference implementation's limit too).
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

/// Writes atomically (temp file + rename). Tensors are laid out in name order, the header is padded with
/// spaces to a multiple of 8 so the data starts aligned. Throws DataError if a tensor's byte count does not
/// match its shape or a name is "__metadata__", IoError if the file cannot be written.
void write_safetensors(const std::string& path, const SafetensorsFile& file);

/// The bytes write_safetensors would write (for tests and in-memory use).
std::string serialize_safetensors(const SafetensorsFile& file, const std::string& what = "safetensors");

/// Reads and validates a whole file: header length sane, JSON valid, known dtypes, offsets in range,
/// sizes matching shapes, tensors contiguous without gaps or overlaps. Every violation throws DataError
/// naming the file (and tensor); an unreadable file throws IoError.
SafetensorsFile read_safetensors(const std::string& path);

/// Parses bytes already in memory; `source` names them in errors.
SafetensorsFile parse_safetensors(const std::string& bytes, const std::string& source);

}  // namespace ragmig::model
