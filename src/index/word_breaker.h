// Word breaking for BM25 in the manner of Lucene's StandardTokenizer (Unicode UAX #29 word boundaries): runs
// of letters and digits, joined across '.', '\'' and ':' between letters and across '.', ',', ';' and '\''
// between digits ("U.S.A", "don't", "3.14", "1,000"), with each CJK ideograph a word of its own. The
// character classes are compact range tables covering the scripts of English-language corpora, not the
// full Unicode database (no ICU here): exotic characters may break where Lucene would not.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ragmig::index {

/// UAX #29 word-break classes, reduced to what the rules below need.
enum class WordClass : uint8_t {
  kOther,         ///< breaks on both sides and is dropped (space, punctuation, symbols, emoji)
  kLetter,        ///< ALetter (and Katakana, Hangul, Indic letters, treated alike)
  kNumeric,       ///< decimal digits
  kMidLetter,     ///< ':' '·' ... : joins letter-letter
  kMidNum,        ///< ',' ';' ... : joins digit-digit
  kMidNumLet,     ///< '.' '’' ... : joins letter-letter and digit-digit
  kSingleQuote,   ///< '\'': joins letter-letter and digit-digit
  kExtendNumLet,  ///< '_' and connector punctuation: joins anything word-like
  kExtend,        ///< combining marks, ZWJ, format characters: attach to what precedes them
  kIdeographic,   ///< CJK ideographs and Hiragana: one word per character
};

WordClass word_class(char32_t cp);

/// Java's Character.toLowerCase for Latin (incl. Extended-A/B and Additional), Greek, Cyrillic, Armenian,
/// Georgian, Roman numerals and fullwidth forms; other code points are returned unchanged.
char32_t lower_case(char32_t cp);

/// Decodes one code point at `pos` and advances; a malformed byte decodes as U+FFFD (class kOther).
char32_t next_code_point(std::string_view s, size_t& pos);
void append_code_point(std::string& out, char32_t cp);

/// Longest word Lucene emits; longer runs are cut into pieces of this many code points.
inline constexpr size_t kMaxWordCodePoints = 255;

/// Calls emit(word) for each word of `text`, as UTF-8, in order, case preserved.
void break_words(std::string_view text, const std::function<void(std::string_view)>& emit);

/// The words of `text` (convenience for tests and tools).
std::vector<std::string> words_of(std::string_view text);

}  // namespace ragmig::index
