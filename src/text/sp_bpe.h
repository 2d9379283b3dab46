// SentencePiece-style BPE as the tokenizers library runs Gemma's, Llama's and Mistral's tokenizer.json: normaliser
// steps (Gemma's Replace " " -> "▁", Mistral's legacy Prepend "▁" then Replace, NFC), or a Metaspace pre-tokenizer
// that does not split (transformers 5's Llama and Mistral: spaces -> "▁", one prepended before the text, or before
// the text's first part only); then the whole text is one word: each character its vocabulary token, or, where
// the vocabulary lacks it, the <0xXX> tokens of its UTF-8 bytes (byte fallback); then the merge rules over those
// symbols (bpe_merges.h). Framing and special tokens are Tokenizer's (<bos> ids... <eos> for EmbeddingGemma, <s>
// ids... </s> for e5-mistral).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe_merges.h"
#include "text/tokenizer.h"

namespace ragmig::text {

class SentencePieceBpeTokenizer : public Tokenizer {
 public:
  /// Throws DataError for what Tokenizer refuses, a normaliser step other than Replace, Prepend and NFC, a
  /// Metaspace that splits, a byte token
  /// <0x00> ... <0xFF> missing from the vocabulary (byte fallback needs all 256), and naming the merge whose halves
  /// or result are not vocabulary tokens.
  explicit SentencePieceBpeTokenizer(const TokenizerSpec& spec, const std::string& source = "vocabulary");

  /// The byte fallback token of `byte`: "<0x41>" for 'A'.
  static std::string byte_token(uint8_t byte);

 private:
  // Malformed UTF-8 bytes are taken one by one, each through its byte token.
  void encode_text(std::string_view text, bool at_start, size_t limit, std::vector<int32_t>& out) const override;

  std::array<int32_t, 256> byte_ids_{};   // each byte's <0xXX> token
  std::array<int32_t, 128> ascii_ids_{};  // each ASCII character's token, -1 where the vocabulary lacks it
  BpeMerges merges_;
};

}  // namespace ragmig::text
