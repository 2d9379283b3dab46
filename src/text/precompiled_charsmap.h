// SentencePiece's normaliser as a model carries it (the "precompiled_charsmap" of its model proto, and of a
// tokenizer.json Precompiled normaliser): a darts-clone double-array trie over UTF-8 keys whose values index
// NUL-terminated replacement strings. XLM-R's (nmt_nfkc) maps compatibility characters to their NFKC forms
// ("ｆ" -> "f", "①" -> "1"), composes combining sequences and turns control characters into spaces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ragmig::text {

class PrecompiledCharsmap {
 public:
  /// `blob` is the charsmap's bytes: a little-endian u32 trie size in bytes, the trie's u32 units, then the
  /// replacements. Throws DataError naming `source` when it is too short for its own trie size.
  PrecompiledCharsmap(std::string blob, const std::string& source);

  /// The tokenizers library's normalisation: each extended grapheme cluster shorter than 6 bytes that the trie
  /// maps (by its shortest mapped prefix) is replaced whole; the code points of any other cluster are replaced
  /// one by one where the trie maps them.
  std::string normalize(std::string_view text) const;

  /// The bytes given to the constructor.
  const std::string& blob() const { return blob_; }

 private:
  // The replacement of `chunk`'s shortest prefix that the trie holds, or nullopt. Reads outside the trie (a
  // damaged charsmap) find nothing.
  std::optional<std::string_view> transform(std::string_view chunk) const;

  std::string blob_;
  std::vector<uint32_t> units_;
  std::string_view replacements_;  // into blob_
};

}  // namespace ragmig::text
