// Builds a WordPiece vocabulary for encoders trained from scratch, the way Hugging Face tokenizers'
// WordPieceTrainer does: BPE merges over the words of basic_tokenize, continuation pieces prefixed "##".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ragmig::text {

struct VocabBuilderOptions {
  int64_t vocab_size = 8000;      ///< upper bound on the output size, special tokens included
  int64_t min_frequency = 2;      ///< a character or a merge seen fewer times is not added
  int64_t limit_alphabet = 1000;  ///< keep at most this many characters (the most frequent)
  bool lower_case = true;         ///< as WordPieceTokenizer's lower_case
};

/// The special tokens every built vocabulary starts with, in this order (ids 0..4).
const std::vector<std::string>& special_tokens();

/// Returns [PAD] [UNK] [CLS] [SEP] [MASK], then the alphabet (each kept character c as "c", in code point
/// order, then as "##c" in the same order), then the merged tokens in merge order. Merges take the most
/// frequent adjacent pair (word frequency weighted); ties go to the lexicographically smallest pair.
/// The alphabet is trimmed so that it fits in vocab_size. Deterministic. Throws ConfigError for options
/// out of range.
std::vector<std::string> build_wordpiece_vocab(const std::vector<std::string>& texts,
                                               const VocabBuilderOptions& opts);

}  // namespace ragmig::text
