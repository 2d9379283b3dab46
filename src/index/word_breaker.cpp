// Word breaking after UAX #29 (see word_breaker.h). The range tables are written out by hand from the
// Unicode character database for the blocks that English-language corpora actually contain.
#include "index/word_breaker.h"

#include <algorithm>
#include <iterator>

namespace ragmig::index {
namespace {

struct Range {
  char32_t first, last;
  WordClass cls;
};

using W = WordClass;

// Sorted, non-overlapping; code points above 0x7F not listed are kOther.
constexpr Range kRanges[] = {
    {0x00AA, 0x00AA, W::kLetter},       {0x00AD, 0x00AD, W::kExtend},   // soft hyphen (Format)
    {0x00B5, 0x00B5, W::kLetter},       {0x00B7, 0x00B7, W::kMidLetter}, {0x00BA, 0x00BA, W::kLetter},
    {0x00C0, 0x00D6, W::kLetter},       {0x00D8, 0x00F6, W::kLetter},    {0x00F8, 0x02C1, W::kLetter},
    {0x02C6, 0x02D1, W::kLetter},       {0x02E0, 0x02E4, W::kLetter},    {0x02EC, 0x02EC, W::kLetter},
    {0x02EE, 0x02EE, W::kLetter},       {0x0300, 0x036F, W::kExtend},    {0x0370, 0x0374, W::kLetter},
    {0x0376, 0x037D, W::kLetter},       {0x037E, 0x037E, W::kMidNum},    {0x037F, 0x037F, W::kLetter},
    {0x0386, 0x0386, W::kLetter},       {0x0387, 0x0387, W::kMidLetter}, {0x0388, 0x03F5, W::kLetter},
    {0x03F7, 0x0481, W::kLetter},       {0x0483, 0x0489, W::kExtend},    {0x048A, 0x052F, W::kLetter},
    {0x0531, 0x0556, W::kLetter},       {0x0559, 0x0559, W::kLetter},    {0x0560, 0x0588, W::kLetter},
    {0x0589, 0x0589, W::kMidNum},       {0x0591, 0x05BD, W::kExtend},    {0x05BF, 0x05BF, W::kExtend},
    {0x05C1, 0x05C2, W::kExtend},       {0x05C4, 0x05C5, W::kExtend},    {0x05C7, 0x05C7, W::kExtend},
    {0x05D0, 0x05F3, W::kLetter},       {0x05F4, 0x05F4, W::kMidLetter}, {0x060C, 0x060D, W::kMidNum},
    {0x0610, 0x061A, W::kExtend},       {0x0620, 0x064A, W::kLetter},    {0x064B, 0x065F, W::kExtend},
    {0x0660, 0x0669, W::kNumeric},      {0x066B, 0x066B, W::kNumeric},   {0x066C, 0x066C, W::kMidNum},
    {0x066E, 0x066F, W::kLetter},       {0x0670, 0x0670, W::kExtend},    {0x0671, 0x06D3, W::kLetter},
    {0x06D5, 0x06D5, W::kLetter},       {0x06D6, 0x06DC, W::kExtend},    {0x06DF, 0x06E4, W::kExtend},
    {0x06E5, 0x06E6, W::kLetter},       {0x06E7, 0x06ED, W::kExtend},    {0x06EE, 0x06EF, W::kLetter},
    {0x06F0, 0x06F9, W::kNumeric},      {0x06FA, 0x06FF, W::kLetter},    {0x0700, 0x08FF, W::kLetter},
    {0x0900, 0x0963, W::kLetter},       {0x0966, 0x096F, W::kNumeric},   {0x0970, 0x0DFF, W::kLetter},
    {0x0E00, 0x0E7F, W::kLetter},       {0x0E80, 0x0FFF, W::kLetter},    {0x1000, 0x1049, W::kLetter},
    {0x10A0, 0x10FF, W::kLetter},       {0x1100, 0x11FF, W::kLetter},    {0x1200, 0x137F, W::kLetter},
    {0x13A0, 0x13FF, W::kLetter},       {0x1401, 0x166C, W::kLetter},    {0x1AB0, 0x1AFF, W::kExtend},
    {0x1D00, 0x1DBF, W::kLetter},       {0x1DC0, 0x1DFF, W::kExtend},    {0x1E00, 0x1FBC, W::kLetter},
    {0x1FBE, 0x1FBE, W::kLetter},       {0x1FC2, 0x1FCC, W::kLetter},    {0x1FD0, 0x1FDB, W::kLetter},
    {0x1FE0, 0x1FEC, W::kLetter},       {0x1FF2, 0x1FFC, W::kLetter},    {0x200C, 0x200D, W::kExtend},
    {0x200E, 0x200F, W::kExtend},       {0x2018, 0x2019, W::kMidNumLet}, {0x2024, 0x2024, W::kMidNumLet},
    {0x2027, 0x2027, W::kMidLetter},    {0x202A, 0x202E, W::kExtend},    {0x203F, 0x2040, W::kExtendNumLet},
    {0x2044, 0x2044, W::kMidNum},       {0x2054, 0x2054, W::kExtendNumLet}, {0x2060, 0x2064, W::kExtend},
    {0x2071, 0x2071, W::kLetter},       {0x207F, 0x207F, W::kLetter},    {0x2090, 0x209C, W::kLetter},
    {0x20D0, 0x20F0, W::kExtend},       {0x2160, 0x2188, W::kLetter},    {0x2C00, 0x2DDF, W::kLetter},
    {0x2DE0, 0x2DFF, W::kExtend},       {0x2E80, 0x2FDF, W::kIdeographic}, {0x3005, 0x3007, W::kIdeographic},
    {0x3021, 0x3029, W::kIdeographic},  {0x302A, 0x302F, W::kExtend},    {0x3038, 0x303C, W::kIdeographic},
    {0x3041, 0x3096, W::kIdeographic},  {0x3099, 0x309A, W::kExtend},    {0x309D, 0x309F, W::kIdeographic},
    {0x30A1, 0x30FA, W::kLetter},       {0x30FC, 0x30FF, W::kLetter},    {0x3105, 0x318E, W::kLetter},
    {0x31A0, 0x31BF, W::kLetter},       {0x31F0, 0x31FF, W::kLetter},    {0x3400, 0x4DBF, W::kIdeographic},
    {0x4E00, 0x9FFF, W::kIdeographic},  {0xA000, 0xA4CF, W::kLetter},    {0xA640, 0xA66E, W::kLetter},
    {0xA66F, 0xA672, W::kExtend},       {0xA674, 0xA67D, W::kExtend},    {0xA67F, 0xA69D, W::kLetter},
    {0xA69E, 0xA69F, W::kExtend},       {0xA717, 0xA71F, W::kLetter},    {0xA722, 0xA788, W::kLetter},
    {0xA78B, 0xA7FF, W::kLetter},       {0xAC00, 0xD7A3, W::kLetter},    {0xF900, 0xFAFF, W::kIdeographic},
    {0xFB00, 0xFB06, W::kLetter},       {0xFB13, 0xFB17, W::kLetter},    {0xFB1D, 0xFDFF, W::kLetter},
    {0xFE00, 0xFE0F, W::kExtend},       {0xFE10, 0xFE10, W::kMidNum},    {0xFE13, 0xFE13, W::kMidLetter},
    {0xFE14, 0xFE14, W::kMidNum},       {0xFE20, 0xFE2F, W::kExtend},    {0xFE33, 0xFE34, W::kExtendNumLet},
    {0xFE4D, 0xFE4F, W::kExtendNumLet}, {0xFE50, 0xFE50, W::kMidNum},    {0xFE52, 0xFE52, W::kMidNumLet},
    {0xFE54, 0xFE54, W::kMidNum},       {0xFE55, 0xFE55, W::kMidLetter}, {0xFE70, 0xFEFC, W::kLetter},
    {0xFEFF, 0xFEFF, W::kExtend},       {0xFF07, 0xFF07, W::kMidNumLet}, {0xFF0C, 0xFF0C, W::kMidNum},
    {0xFF0E, 0xFF0E, W::kMidNumLet},    {0xFF10, 0xFF19, W::kNumeric},   {0xFF1A, 0xFF1A, W::kMidLetter},
    {0xFF1B, 0xFF1B, W::kMidNum},       {0xFF21, 0xFF3A, W::kLetter},    {0xFF3F, 0xFF3F, W::kExtendNumLet},
    {0xFF41, 0xFF5A, W::kLetter},       {0xFF66, 0xFFDC, W::kLetter},    {0x10000, 0x1BFFF, W::kLetter},
    {0x1D400, 0x1D7CD, W::kLetter},     {0x1D7CE, 0x1D7FF, W::kNumeric}, {0x20000, 0x3FFFF, W::kIdeographic},
    {0xE0001, 0xE007F, W::kExtend},     {0xE0100, 0xE01EF, W::kExtend},
};

constexpr bool ranges_sorted() {
  for (size_t i = 0; i < std::size(kRanges); ++i) {
    if (kRanges[i].first > kRanges[i].last) return false;
    if (i > 0 && kRanges[i].first <= kRanges[i - 1].last) return false;
  }
  return true;
}
static_assert(ranges_sorted(), "kRanges must be sorted and disjoint for the binary search");

WordClass ascii_class(char32_t c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return W::kLetter;
  if (c >= '0' && c <= '9') return W::kNumeric;
  switch (c) {
    case '\'': return W::kSingleQuote;
    case '.': return W::kMidNumLet;
    case ',':
    case ';': return W::kMidNum;
    case ':': return W::kMidLetter;
    case '_': return W::kExtendNumLet;
    default: return W::kOther;
  }
}

bool is_wordish(WordClass c) { return c == W::kLetter || c == W::kNumeric || c == W::kExtendNumLet; }

// Upper-case blocks where lower = upper + 1 for every even (or odd) code point of the range.
struct PairRange {
  char32_t first, last;
  bool even_upper;
};

constexpr PairRange kPairs[] = {
    {0x0100, 0x012F, true},  {0x0132, 0x0137, true},  {0x0139, 0x0148, false}, {0x014A, 0x0177, true},
    {0x0179, 0x017E, false}, {0x01CD, 0x01DC, false}, {0x01DE, 0x01EF, true},  {0x01F8, 0x021F, true},
    {0x0222, 0x0233, true},  {0x0246, 0x024F, true},  {0x03D8, 0x03EF, true},  {0x0460, 0x0481, true},
    {0x048A, 0x04BF, true},  {0x04C1, 0x04CE, false}, {0x04D0, 0x052F, true},  {0x1E00, 0x1E95, true},
    {0x1EA0, 0x1EFF, true},
};

}  // namespace

WordClass word_class(char32_t cp) {
  if (cp < 0x80) return ascii_class(cp);
  auto it = std::upper_bound(std::begin(kRanges), std::end(kRanges), cp,
                             [](char32_t c, const Range& r) { return c < r.first; });
  if (it == std::begin(kRanges)) return W::kOther;
  --it;
  return cp <= it->last ? it->cls : W::kOther;
}

char32_t lower_case(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if ((c >= 0x00C0 && c <= 0x00DE && c != 0x00D7)) return c + 32;
  if (c == 0x0130) return 'i';
  if (c == 0x0178) return 0x00FF;
  if (c == 0x01C4 || c == 0x01C7 || c == 0x01CA || c == 0x01F1) return c + 2;
  if (c == 0x01C5 || c == 0x01C8 || c == 0x01CB || c == 0x01F2) return c + 1;
  if (c == 0x0386) return 0x03AC;
  if (c >= 0x0388 && c <= 0x038A) return c + 37;
  if (c == 0x038C) return 0x03CC;
  if (c == 0x038E || c == 0x038F) return c + 63;
  if ((c >= 0x0391 && c <= 0x03A1) || (c >= 0x03A3 && c <= 0x03AB)) return c + 32;
  if (c == 0x03F4) return 0x03B8;
  if (c == 0x03F7 || c == 0x03FA) return c + 1;
  if (c == 0x03F9) return 0x03F2;
  if (c >= 0x03FD && c <= 0x03FF) return c - 130;
  if (c >= 0x0400 && c <= 0x040F) return c + 80;
  if (c >= 0x0410 && c <= 0x042F) return c + 32;
  if (c == 0x04C0) return 0x04CF;
  if (c >= 0x0531 && c <= 0x0556) return c + 48;
  if (c >= 0x10A0 && c <= 0x10C5) return c + 7264;
  if (c == 0x1E9E) return 0x00DF;
  if (c >= 0x2160 && c <= 0x216F) return c + 16;
  if (c >= 0xFF21 && c <= 0xFF3A) return c + 32;
  for (const PairRange& p : kPairs) {
    if (c < p.first || c > p.last) continue;
    const bool even = (c % 2) == 0;
    return even == p.even_upper ? c + 1 : c;
  }
  return c;
}

char32_t next_code_point(std::string_view s, size_t& pos) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  int len = 0;
  char32_t cp = 0, min = 0;
  if ((b0 & 0xE0) == 0xC0) len = 2, cp = b0 & 0x1F, min = 0x80;
  else if ((b0 & 0xF0) == 0xE0) len = 3, cp = b0 & 0x0F, min = 0x800;
  else if ((b0 & 0xF8) == 0xF0) len = 4, cp = b0 & 0x07, min = 0x10000;
  if (len == 0 || pos + static_cast<size_t>(len) > s.size()) {
    ++pos;
    return 0xFFFD;
  }
  for (int i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(s[pos + static_cast<size_t>(i)]);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++pos;
    return 0xFFFD;
  }
  pos += static_cast<size_t>(len);
  return cp;
}

void append_code_point(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void break_words(std::string_view text, const std::function<void(std::string_view)>& emit) {
  // Emits text[begin, end) in pieces of at most kMaxWordCodePoints code points.
  auto emit_word = [&](size_t begin, size_t end) {
    size_t piece = begin, count = 0, p = begin;
    while (p < end) {
      next_code_point(text, p);
      if (++count == kMaxWordCodePoints) {
        emit(text.substr(piece, p - piece));
        piece = p;
        count = 0;
      }
    }
    if (p > piece) emit(text.substr(piece, p - piece));
  };
  // Skips Extend characters from `pos`; returns the class of the next other character (kOther at the end).
  auto class_after_extends = [&](size_t& pos) {
    while (pos < text.size()) {
      size_t p = pos;
      const WordClass c = word_class(next_code_point(text, p));
      if (c != W::kExtend) return c;
      pos = p;
    }
    return W::kOther;
  };

  size_t pos = 0;
  while (pos < text.size()) {
    const size_t begin = pos;
    const WordClass first = word_class(next_code_point(text, pos));
    if (first == W::kIdeographic) {
      class_after_extends(pos);
      emit_word(begin, pos);
      continue;
    }
    if (!is_wordish(first)) continue;
    WordClass last = first;
    bool has_alnum = first != W::kExtendNumLet;
    size_t end = pos;
    while (end < text.size()) {
      size_t p = end;
      const WordClass c = word_class(next_code_point(text, p));
      if (c == W::kExtend) {
        end = p;
        continue;
      }
      if (is_wordish(c)) {
        end = p;
        last = c;
        has_alnum |= c != W::kExtendNumLet;
        continue;
      }
      const bool joins_letters = c == W::kMidLetter || c == W::kMidNumLet || c == W::kSingleQuote;
      const bool joins_digits = c == W::kMidNum || c == W::kMidNumLet || c == W::kSingleQuote;
      if ((last == W::kLetter && joins_letters) || (last == W::kNumeric && joins_digits)) {
        size_t q = p;
        const WordClass after = class_after_extends(q);
        if (after == last) {
          next_code_point(text, q);
          end = q;
          continue;
        }
      }
      break;
    }
    if (has_alnum) emit_word(begin, end);
    pos = end;
  }
}

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  break_words(text, [&](std::string_view w) { out.emplace_back(w); });
  return out;
}

}  // namespace ragmig::index
