// The Unicode facts BERT-style text processing needs, without ICU: robust UTF-8 decoding, the character
// classes of Hugging Face's BasicTokenizer and of GPT-2's split pattern, simple lower-casing, NFD accent
// stripping (Mn marks removed) and extended grapheme clusters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ragmig::text {

/// Classes as BasicTokenizer sees them; when several apply, the earlier step of the tokenizer wins
/// (control > whitespace > CJK > punctuation > mark).
enum class CharClass : uint8_t {
  kOther = 0,
  kWhitespace = 1,  ///< space, \t, \n, \r, Unicode Zs
  kControl = 2,     ///< Unicode C* (Cc, Cf, Co, Cn, Cs) except \t \n \r: dropped by clean-up
  kPunct = 3,       ///< Unicode P* plus the ASCII symbol ranges 33-47, 58-64, 91-96, 123-126
  kCjk = 4,         ///< the CJK ideograph blocks of BasicTokenizer._is_chinese_char
  kMark = 5,        ///< Unicode Mn (non-spacing marks, removed when accents are stripped)
};

/// The classes of GPT-2's split pattern (byte-level BPE): \p{L}, \p{N}, \s (Unicode's White_Space).
enum class SplitClass : uint8_t { kOther = 0, kLetter = 1, kNumber = 2, kSpace = 3 };

inline constexpr char32_t kReplacementChar = 0xFFFD;

/// Decodes the code point at `pos` and advances `pos`. Malformed input (bad lead or continuation bytes,
/// overlong forms, surrogates, > U+10FFFF, truncation) consumes one byte and yields U+FFFD.
char32_t decode_utf8(std::string_view s, size_t& pos);

/// Whether all of `s` is well-formed UTF-8 (decode_utf8 finds nothing malformed; an encoded U+FFFD is valid).
bool is_valid_utf8(std::string_view s);

/// Appends the UTF-8 encoding of `cp` (assumed valid).
void append_utf8(std::string& out, char32_t cp);

/// Number of code points, counting each malformed byte as one.
size_t count_code_points(std::string_view s);

CharClass char_class(char32_t cp);

SplitClass split_class(char32_t cp);

/// The byte offset where the White_Space code points (split_class kSpace) that start `s` end.
size_t leading_white_space_end(std::string_view s);
/// The byte offset where the White_Space code points that end `s` begin.
size_t trailing_white_space_start(std::string_view s);

/// The end (byte offset) of the extended grapheme cluster of `s` that starts at `pos` (< s.size()): Unicode's
/// UAX #29 rules GB3-GB13 (CR LF, controls, Hangul syllables, extend and ZWJ, spacing marks, prepends, emoji ZWJ
/// sequences, flag pairs) without GB9c's Indic conjuncts, whose clusters of 3-byte letters no tokenizer step
/// that looks at clusters (under 6 bytes) can tell apart.
size_t grapheme_end(std::string_view s, size_t pos);

/// Simple (one-to-one) lower-case mapping, as Python's str.lower() except U+0130, which maps to "i"
/// (Python gives "i" + U+0307, and the mark is stripped right after).
char32_t to_lower(char32_t cp);

/// Writes the NFD decomposition of `cp` without its Mn marks to `out` (Hangul syllables decompose into
/// jamo) and returns how many code points that is: 0 for a mark itself, 1 for most, up to 3.
int strip_accents(char32_t cp, char32_t out[3]);

/// The Unicode version the tables were generated from.
const char* unicode_version();

}  // namespace ragmig::text
