// The safetensors reader and writer. The reader trusts nothing in the file: every number from the header
// is range-checked before it is used as a size or an offset, so a corrupt file gives DataError, not a crash.
#include "model/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_errors.h"

namespace ragmig::model {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swapping");

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  int64_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "F64", 8}, {DType::F32, "F32", 4}, {DType::F16, "F16", 2}, {DType::BF16, "BF16", 2},
    {DType::I64, "I64", 8}, {DType::I32, "I32", 4}, {DType::I16, "I16", 2}, {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},   {DType::BOOL, "BOOL", 1},
};

const DTypeInfo& info(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d;
  RAGMIG_CHECK(false, "unknown DType value");
  return kDTypes[0];  // unreachable
}

[[noreturn]] void fail(const std::string& source, const std::string& msg) {
  throw DataError(source + ": invalid safetensors file: " + msg);
}

[[noreturn]] void fail_tensor(const std::string& source, const std::string& name, const std::string& msg) {
  throw DataError(source + ": invalid safetensors file: tensor \"" + name + "\": " + msg);
}

// A JSON integer that fits int64 and is >= 0, or nullopt-like failure reported by the caller.
bool non_negative_int(const nlohmann::json& v, int64_t& out) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    int64_t s = v.get<int64_t>();
    if (s < 0) return false;
    out = s;
    return true;
  }
  return false;
}

uint64_t read_u64_le(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void write_u64_le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

std::string to_string(DType dtype) { return info(dtype).name; }

DType parse_dtype(const std::string& text) {
  for (const auto& d : kDTypes)
    if (text == d.name) return d.dtype;
  throw DataError("unknown safetensors dtype \"" + text + "\" (expected F64, F32, F16, BF16, I64, I32, I16, I8, U8 or BOOL)");
}

int64_t item_size(DType dtype) { return info(dtype).size; }

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw DataError("negative dimension in tensor shape");
    if (__builtin_mul_overflow(n, d, &n)) throw DataError("tensor shape overflows 64 bits");
  }
  return n;
}

namespace {

// The 8-byte header length and the JSON header (padded to 8 bytes) that come before the tensors' bytes.
std::string safetensors_header(const SafetensorsFile& file, const std::string& what) {
  nlohmann::json header = nlohmann::json::object();
  int64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    if (name == "__metadata__") throw DataError(what + ": a tensor may not be named \"__metadata__\"");
    int64_t expected = 0;
    try {
      expected = element_count(t.shape);
    } catch (const DataError& e) {
      throw DataError(what + ": tensor \"" + name + "\": " + e.what());
    }
    if (__builtin_mul_overflow(expected, item_size(t.dtype), &expected) ||
        static_cast<int64_t>(t.bytes.size()) != expected)
      throw DataError(what + ": tensor \"" + name + "\": has " + std::to_string(t.bytes.size()) +
                      " bytes, its shape and dtype need " + std::to_string(expected));
    header[name] = {{"dtype", to_string(t.dtype)},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + expected}}};
    offset += expected;
  }
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;

  std::string text = header.dump();
  // Padding the header to a multiple of 8 puts the data on an 8-byte boundary, so readers can map F64
  // and I64 tensors without copying.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  write_u64_le(out, text.size());
  return out + text;
}

}  // namespace

std::string serialize_safetensors(const SafetensorsFile& file, const std::string& what) {
  std::string out = safetensors_header(file, what);
  size_t size = out.size();
  for (const auto& [name, t] : file.tensors) size += t.bytes.size();
  out.reserve(size);
  for (const auto& [name, t] : file.tensors) out += t.bytes;
  return out;
}

void write_safetensors(const std::string& path, const SafetensorsFile& file) {
  const std::string header = safetensors_header(file, path);  // throws before anything is written
  AtomicFileWriter out(path);  // the tensors' bytes as they are, not joined into one more copy first
  out.write(header);
  for (const auto& [name, t] : file.tensors) out.write(t.bytes);
  out.commit();
}

SafetensorsFile parse_safetensors(const std::string& bytes, const std::string& source) {
  if (bytes.size() < 8)
    fail(source, "file is " + std::to_string(bytes.size()) + " bytes, shorter than the 8-byte header length");
  const uint64_t header_len = read_u64_le(bytes.data());
  if (header_len > kMaxSafetensorsHeader)
    fail(source, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                     std::to_string(kMaxSafetensorsHeader) + " bytes");
  if (header_len > bytes.size() - 8)
    fail(source, "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes)");
  if (header_len < 2 || bytes[8] != '{') fail(source, "header is not a JSON object");

  // nlohmann's parser stops at a NUL byte as if the input ended there, which would accept garbage after
  // it; valid JSON text never holds a raw NUL, so refuse it outright.
  if (std::memchr(bytes.data() + 8, '\0', header_len) != nullptr) fail(source, "header is not valid JSON: it contains a NUL byte");

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<int64_t>(header_len));
  } catch (const nlohmann::json::exception& e) {
    fail(source, "header is not valid JSON: " + describe_json_error(e));
  }
  if (!header.is_object()) fail(source, "header is not a JSON object");

  const int64_t data_size = static_cast<int64_t>(bytes.size() - 8 - header_len);
  const char* data = bytes.data() + 8 + header_len;

  SafetensorsFile file;
  struct Span {
    int64_t begin, end;
    std::string name;
  };
  std::vector<Span> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail(source, "\"__metadata__\" is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) fail(source, "\"__metadata__\" value of \"" + key + "\" is not a string");
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object()) fail_tensor(source, name, "entry is not an object");
    auto field = [&](const char* key) -> const nlohmann::json& {
      auto it = entry.find(key);
      if (it == entry.end()) fail_tensor(source, name, std::string("missing \"") + key + "\"");
      return *it;
    };
    const auto& dtype_json = field("dtype");
    const auto& shape_json = field("shape");
    const auto& offsets_json = field("data_offsets");

    RawTensor t;
    if (!dtype_json.is_string()) fail_tensor(source, name, "\"dtype\" is not a string");
    try {
      t.dtype = parse_dtype(dtype_json.get<std::string>());
    } catch (const DataError& e) {
      fail_tensor(source, name, e.what());
    }
    if (!shape_json.is_array()) fail_tensor(source, name, "\"shape\" is not an array");
    for (const auto& d : shape_json) {
      int64_t dim = 0;
      if (!non_negative_int(d, dim)) fail_tensor(source, name, "\"shape\" holds a value that is not a non-negative integer");
      t.shape.push_back(dim);
    }
    if (!offsets_json.is_array() || offsets_json.size() != 2)
      fail_tensor(source, name, "\"data_offsets\" is not an array of two integers");
    int64_t begin = 0, end = 0;
    if (!non_negative_int(offsets_json[0], begin) || !non_negative_int(offsets_json[1], end))
      fail_tensor(source, name, "\"data_offsets\" holds a value that is not a non-negative integer");
    if (begin > end) fail_tensor(source, name, "data_offsets begin " + std::to_string(begin) + " > end " + std::to_string(end));
    if (end > data_size)
      fail_tensor(source, name, "data_offsets end " + std::to_string(end) + " is past the data (" +
                                    std::to_string(data_size) + " bytes)");
    int64_t nbytes = 0;
    try {
      nbytes = element_count(t.shape);
    } catch (const DataError& e) {
      fail_tensor(source, name, e.what());
    }
    if (__builtin_mul_overflow(nbytes, item_size(t.dtype), &nbytes) || nbytes != end - begin)
      fail_tensor(source, name, "byte range holds " + std::to_string(end - begin) +
                                    " bytes, but its shape and dtype need " + std::to_string(nbytes));
    spans.push_back({begin, end, name});
    file.tensors.emplace(name, std::move(t));
  }

  // The spec wants the data buffer covered exactly: no byte shared by two tensors, none left unused.
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  int64_t at = 0;
  for (const auto& s : spans) {
    if (s.begin < at) fail_tensor(source, s.name, "its bytes overlap another tensor's");
    if (s.begin > at) fail_tensor(source, s.name, "leaves a gap of " + std::to_string(s.begin - at) + " unused bytes before it");
    at = s.end;
  }
  if (at != data_size)
    fail(source, "data holds " + std::to_string(data_size) + " bytes but the tensors cover " + std::to_string(at));

  for (const auto& s : spans) file.tensors[s.name].bytes.assign(data + s.begin, static_cast<size_t>(s.end - s.begin));
  return file;
}

SafetensorsFile read_safetensors(const std::string& path) { return parse_safetensors(read_file(path), path); }

}  // namespace ragmig::model
