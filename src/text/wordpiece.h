// WordPiece tokenization compatible with Hugging Face's BertTokenizer (BasicTokenizer + WordpieceTokenizer):
// text -> cleaned, CJK-split, lower-cased and accent-stripped words split on punctuation -> greedy
// longest-match-first word pieces with "##" continuations -> [CLS] ids... [SEP] (or a model's own names for
// them: MPNet's <s> ids... </s>).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ragmig::text {

/// How BertTokenizer normalises text before it splits words: Hugging Face's do_lower_case, strip_accents
/// (whose null means "as do_lower_case") and tokenize_chinese_chars.
struct TextNormalization {
  bool lower_case = true;
  bool strip_accents = true;
  bool split_cjk = true;
  bool operator==(const TextNormalization&) const = default;
};

/// The tokens a tokenizer puts around texts and pads with, by name: BERT's, or a folder's own (MPNet's
/// tokenizer_config.json says cls "<s>", sep "</s>", pad "<pad>", unk "[UNK]", mask "<mask>").
struct SpecialTokens {
  std::string cls = "[CLS]", sep = "[SEP]", pad = "[PAD]", unk = "[UNK]", mask = "[MASK]";
  bool operator==(const SpecialTokens&) const = default;
};

class WordPieceTokenizer {
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
  /// Writes one token per line, atomically. Throws IoError.
  void save(const std::string& vocab_txt) const;

  /// BasicTokenizer: drops NUL, U+FFFD, invalid UTF-8 and control characters, splits on whitespace, puts
  /// each CJK ideograph on its own (split_cjk), lower-cases (lower_case), strips accents (strip_accents:
  /// NFD minus Mn marks) and splits off every punctuation character. Unlike the slow Python tokenizer it does not NFC-compose
  /// first (as BertTokenizerFast), and special tokens written in the text are not kept whole.
  std::vector<std::string> basic_tokenize(std::string_view text) const;
  /// Word pieces, "##" marking continuations; a word longer than 100 code points, or one the vocabulary
  /// cannot cover entirely, becomes a single [UNK].
  std::vector<std::string> tokenize(std::string_view text) const;
  /// [CLS] piece ids... [SEP], with the pieces truncated so the total is at most max_len (max_len >= 2,
  /// else ConfigError). Stops tokenizing once max_len is reached, so long passages cost little.
  std::vector<int32_t> encode(std::string_view text, int64_t max_len) const;
  /// Piece ids without [CLS]/[SEP]; at most `max_pieces` of them when that is >= 0.
  std::vector<int32_t> encode_pieces(std::string_view text, int64_t max_pieces = -1) const;

  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  /// The id of the mask token, or -1 when the vocabulary has none.
  int32_t mask_id() const { return mask_id_; }
  const SpecialTokens& special_tokens() const { return special_; }
  bool lower_case() const { return norm_.lower_case; }
  const TextNormalization& normalization() const { return norm_; }
  int64_t vocab_size() const { return static_cast<int64_t>(vocab_.size()); }
  const std::vector<std::string>& vocab() const { return vocab_; }
  /// unk_id() when the token is not in the vocabulary.
  int32_t id_of(std::string_view token) const;
  /// -1 when the token is not in the vocabulary.
  int32_t find(std::string_view token) const;

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using IdMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

  WordPieceTokenizer(std::vector<std::string> vocab, const TextNormalization& normalization,
                     const SpecialTokens& special, const std::string& source);
  // Calls emit(word) for each basic token; emit returns false to stop early.
  template <typename Emit>
  void for_each_word(std::string_view text, Emit&& emit) const;
  // Appends the piece ids of one basic token.
  void word_piece_ids(std::string_view word, std::vector<int32_t>& out) const;

  std::vector<std::string> vocab_;
  IdMap ids_;
  TextNormalization norm_;
  SpecialTokens special_;
  size_t max_token_chars_ = 1;  // longest vocabulary entry in code points, "##" excluded
  int32_t cls_id_ = -1, sep_id_ = -1, pad_id_ = -1, unk_id_ = -1, mask_id_ = -1;
};

}  // namespace ragmig::text
