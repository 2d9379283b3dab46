// SentencePiece Unigram tokenization compatible with Hugging Face's XLMRobertaTokenizer (as the tokenizers
// library runs a Unigram model): the normaliser's steps (SentencePiece's precompiled charsmap, replacements,
// stripping); optionally a split at whitespace; Metaspace (spaces become "▁", one is put before each piece, and
// pieces are cut before each "▁"); then per piece the segmentation with the highest total log probability
// (Viterbi; a character no token covers becomes <unk> at the lowest score less 10, and neighbouring unknowns
// fuse into one <unk>); <s> ids... </s>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/precompiled_charsmap.h"
#include "text/tokenizer.h"

namespace ragmig::text {

class UnigramTokenizer : public Tokenizer {
 public:
  /// Throws DataError naming `source` for what Tokenizer refuses, scores that do not match the vocabulary one
  /// to one or are not finite, or a damaged precompiled charsmap.
  explicit UnigramTokenizer(const TokenizerSpec& spec, const std::string& source = "vocabulary");

  /// The text after the normaliser's steps.
  std::string normalize(std::string_view text) const;
  /// The pieces the pre-tokenizer cuts normalised text into ("▁Hello", "▁world"); `at_start`: the text begins the
  /// whole text (a Metaspace with prepend_scheme "first" prepends there only).
  std::vector<std::string> pre_tokenize(std::string_view normalized, bool at_start = true) const;

 private:
  void encode_text(std::string_view text, bool at_start, size_t limit, std::vector<int32_t>& out) const override;
  // Appends the best segmentation of one piece.
  void segment(std::string_view piece, std::vector<int32_t>& out) const;

  std::vector<std::optional<PrecompiledCharsmap>> charsmaps_;  // per normaliser step, set for kPrecompiled
  // A byte trie over the vocabulary: (node << 8 | byte) -> child; the token ending at each node, or -1.
  std::unordered_map<uint64_t, int32_t> edges_;
  std::vector<int32_t> token_at_;
  double unk_score_ = 0;
};

}  // namespace ragmig::text
