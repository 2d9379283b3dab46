// Variable-byte integers (LEB128: seven bits a byte, low bits first, the high bit set on every byte but the
// last), the postings encoding of the BM25 index: a document gap or a term frequency below 128 takes one byte.
#pragma once

#include <cstdint>
#include <string>

namespace ragmig::index {

inline void append_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(static_cast<uint8_t>(value) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

/// Decodes one integer at p, never reading at or past end; false (p unchanged) for a truncated or over-long
/// (more than 64 bits) encoding, which only a damaged file holds.
inline bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t& value) {
  if (p < end && *p < 0x80) {  // the common case: one byte
    value = *p++;
    return true;
  }
  uint64_t v = 0;
  const uint8_t* q = p;
  for (int shift = 0; shift < 64 && q < end; shift += 7) {
    const uint8_t byte = *q++;
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) {
      value = v;
      p = q;
      return true;
    }
  }
  return false;
}

}  // namespace ragmig::index
