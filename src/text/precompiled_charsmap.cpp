// PrecompiledCharsmap: darts-clone's unit layout (has_leaf bit 8, label in bits 0-7 and 31, value in bits 0-30,
// offset in bits 10-31 scaled by bit 9) and common-prefix search; the grapheme-then-code-point pass of the
// tokenizers library's Precompiled normaliser.
#include "text/precompiled_charsmap.h"

#include <cstring>

#include "core/error.h"
#include "text/unicode.h"

namespace ragmig::text {
namespace {

bool has_leaf(uint32_t unit) { return ((unit >> 8) & 1) == 1; }
uint32_t value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
uint32_t offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

}  // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string blob, const std::string& source) : blob_(std::move(blob)) {
  uint32_t trie_bytes = 0;
  if (blob_.size() >= 4) std::memcpy(&trie_bytes, blob_.data(), 4);  // little-endian, as every supported host
  if (blob_.size() < 4 || trie_bytes % 4 != 0 || trie_bytes > blob_.size() - 4)
    throw DataError(source + ": precompiled_charsmap of " + std::to_string(blob_.size()) +
                    " bytes does not hold the trie it announces (" + std::to_string(trie_bytes) + " bytes)");
  units_.resize(trie_bytes / 4);
  if (trie_bytes > 0) std::memcpy(units_.data(), blob_.data() + 4, trie_bytes);
  replacements_ = std::string_view(blob_).substr(4 + trie_bytes);
}

std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view chunk) const {
  if (units_.empty()) return std::nullopt;
  size_t node = offset(units_[0]);
  for (const char ch : chunk) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) break;
    node ^= c;
    if (node >= units_.size()) return std::nullopt;
    const uint32_t unit = units_[node];
    if (label(unit) != c) return std::nullopt;
    node ^= offset(unit);
    if (node >= units_.size()) return std::nullopt;
    if (has_leaf(unit)) {  // the shortest mapped prefix decides, as the tokenizers library takes results[0]
      const size_t at = value(units_[node]);
      if (at > replacements_.size()) return std::nullopt;
      const size_t end = replacements_.find('\0', at);
      return replacements_.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    }
  }
  return std::nullopt;
}

std::string PrecompiledCharsmap::normalize(std::string_view text) const {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = grapheme_end(text, pos);
    const std::string_view cluster = text.substr(pos, end - pos);
    pos = end;
    if (cluster.size() < 6)
      if (const auto whole = transform(cluster)) {
        out.append(*whole);
        continue;
      }
    for (size_t at = 0; at < cluster.size();) {
      const size_t from = at;
      decode_utf8(cluster, at);
      const std::string_view part = cluster.substr(from, at - from);
      const auto mapped = transform(part);
      out.append(mapped ? *mapped : part);
    }
  }
  return out;
}

}  // namespace ragmig::text
