// Byte-level BPE compatible with Hugging Face's RobertaTokenizer (GPT-2's scheme, as the tokenizers library
// runs it with a ByteLevel pre-tokenizer and a BPE model; with an NFC normaliser first where the spec has one,
// as GPT-NeoX's and ModernBERT's): a space before a non-empty text that does not start
// with one when add_prefix_space says so; the text split by GPT-2's pattern
// ('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+);
// or by Qwen2's ((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|
// \s+(?!\S)|\s+; Llama 3's has \p{N}{1,3}) where the spec says so (BpeSplit);
// each piece's UTF-8 bytes written as GPT-2's byte characters ("Ġ" for a space); the merge rules applied, the
// first-listed first and leftmost first among equals; <s> ids... </s>.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/bpe_merges.h"
#include "text/tokenizer.h"

namespace ragmig::text {

class ByteBpeTokenizer : public Tokenizer {
 public:
  /// Throws DataError for what Tokenizer refuses, and naming the merge (its 1-based position) whose halves or
  /// result are not vocabulary tokens.
  explicit ByteBpeTokenizer(const TokenizerSpec& spec, const std::string& source = "vocabulary");

  /// The split of `text` (no space added) by GPT-2's pattern or another (BpeSplit): the pieces merges stay within,
  /// as byte ranges of `text`.
  static std::vector<std::string_view> pre_tokenize(std::string_view text, BpeSplit split = BpeSplit::kGpt2);

  /// GPT-2's character for a byte: printable Latin-1 bytes stand for themselves, the others for U+0100 onwards.
  static char32_t byte_char(uint8_t byte);

 private:
  // Invalid UTF-8 bytes are encoded as the bytes they are; a byte whose character is not in the vocabulary
  // becomes the unk token.
  void encode_text(std::string_view text, bool at_start, size_t limit, std::vector<int32_t>& out) const override;

  std::array<int32_t, 256> byte_ids_{};               // the id of each byte's character, or unk
  BpeMerges merges_;
  bool nfc_ = false;                                  // the spec's normaliser: NFC before the split
};

}  // namespace ragmig::text
