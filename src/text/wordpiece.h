// WordPiece tokenization compatible with Hugging Face's BertTokenizer (BasicTokenizer + WordpieceTokenizer):
// text -> cleaned, CJK-split, lower-cased and accent-stripped words split on punctuation -> greedy
// longest-match-first word pieces with "##" continuations -> [CLS] ids... [SEP] (or a model's own names for
// them: MPNet's <s> ids... </s>).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace ragmig::text {

class WordPieceTokenizer : public Tokenizer {
 public:
  /// Words longer than this many code points become [UNK], as in Hugging Face.
  static constexpr size_t kMaxInputCharsPerWord = 100;

  /// `vocab[i]` is the token of id i. Throws DataError for duplicates or a missing cls/sep/pad/unk token
  /// (the mask token is optional).
  explicit WordPieceTokenizer(std::vector<std::string> vocab, bool lower_case = true);
  WordPieceTokenizer(std::vector<std::string> vocab, const TextNormalization& normalization,
                     const SpecialTokens& special = {});
  /// Reads a vocab.txt (one token per line, id = line - 1; plain or gzip). Throws IoError, or DataError
  /// naming file:line for a duplicate token and the file for a missing special token.
  static WordPieceTokenizer from_file(const std::string& vocab_txt, bool lower_case = true);
  /// write_vocab_txt of the vocabulary.
  void save(const std::string& vocab_txt) const;

  /// BasicTokenizer: drops NUL, U+FFFD, invalid UTF-8 and control characters, splits on whitespace, puts
  /// each CJK ideograph on its own (split_cjk), lower-cases (lower_case), strips accents (strip_accents:
  /// NFD minus Mn marks) and splits off every punctuation character. Unlike the slow Python tokenizer it does
  /// not NFC-compose first (as BertTokenizerFast), and special tokens in the text are split like other words
  /// (encode_pieces keeps them whole before this runs).
  std::vector<std::string> basic_tokenize(std::string_view text) const;

  bool lower_case() const { return spec().normalization.lower_case; }
  const TextNormalization& normalization() const { return spec().normalization; }

 private:
  WordPieceTokenizer(std::vector<std::string> vocab, const TextNormalization& normalization,
                     const SpecialTokens& special, const std::string& source);
  // Word pieces, "##" marking continuations; a word longer than 100 code points, or one the vocabulary cannot
  // cover entirely, becomes a single [UNK].
  void encode_text(std::string_view text, bool at_start, size_t limit, std::vector<int32_t>& out) const override;
  // Calls emit(word) for each basic token; emit returns false to stop early.
  template <typename Emit>
  void for_each_word(std::string_view text, Emit&& emit) const;
  // Appends the piece ids of one basic token.
  void word_piece_ids(std::string_view word, std::vector<int32_t>& out) const;

  size_t max_token_chars_ = 1;  // longest vocabulary entry in code points, "##" excluded
};

/// Writes one token per line, atomically. Throws IoError.
void write_vocab_txt(const std::string& path, const std::vector<std::string>& vocab);

}  // namespace ragmig::text
