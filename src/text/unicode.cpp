// Lookups over the generated tables in unicode_tables.cpp, plus UTF-8 coding and the algorithmic Hangul
// decomposition (11,172 syllables are cheaper to compute than to tabulate).
#include "text/unicode.h"

#include <algorithm>

#include "text/unicode_tables.h"

namespace ragmig::text {

namespace ud = unicode_data;

char32_t decode_utf8(std::string_view s, size_t& pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(pos);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  int len;
  char32_t cp;
  char32_t min_cp;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min_cp = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min_cp = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min_cp = 0x10000;
  } else {
    ++pos;
    return kReplacementChar;
  }
  if (pos + len > s.size()) {
    ++pos;
    return kReplacementChar;
  }
  for (int i = 1; i < len; ++i) {
    const unsigned char b = byte(pos + i);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return kReplacementChar;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++pos;
    return kReplacementChar;
  }
  pos += len;
  return cp;
}

bool is_valid_utf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    const size_t at = pos;
    if (decode_utf8(s, pos) == kReplacementChar && s.substr(at, pos - at) != "\xEF\xBF\xBD") return false;
  }
  return true;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t count_code_points(std::string_view s) {
  size_t n = 0;
  for (size_t pos = 0; pos < s.size(); ++n) decode_utf8(s, pos);
  return n;
}

namespace {

// ASCII is most of the text the trainer sees; a direct table keeps it off the binary search.
struct AsciiClasses {
  CharClass cls[128];
  AsciiClasses() {
    for (char32_t c = 0; c < 128; ++c) {
      const uint32_t key = (static_cast<uint32_t>(c) << 3) | 7u;
      const uint32_t* it = std::upper_bound(ud::kClassRuns, ud::kClassRuns + ud::kClassRunsCount, key);
      cls[c] = static_cast<CharClass>(*(it - 1) & 7u);
    }
  }
};

}  // namespace

CharClass char_class(char32_t cp) {
  static const AsciiClasses ascii;
  if (cp < 128) return ascii.cls[cp];
  if (cp > 0x10FFFF) return CharClass::kControl;
  // The run holding cp is the last one starting at or before it; class bits sort below any next start.
  const uint32_t key = (static_cast<uint32_t>(cp) << 3) | 7u;
  const uint32_t* it = std::upper_bound(ud::kClassRuns, ud::kClassRuns + ud::kClassRunsCount, key);
  return static_cast<CharClass>(*(it - 1) & 7u);
}

namespace {

// unicode_tables' grapheme classes: Grapheme_Cluster_Break values, Extended_Pictographic as bit 4.
enum GraphemeBreak : uint8_t {
  kOther, kCR, kLF, kControl, kExtend, kZWJ, kRI, kPrepend, kSpacingMark, kL, kV, kT, kLV, kLVT
};
constexpr uint8_t kPictographic = 16;

uint8_t grapheme_class(char32_t cp) {
  if (cp > 0x10FFFF) return kControl;
  const uint32_t key = (static_cast<uint32_t>(cp) << 5) | 31u;
  const uint32_t* it = std::upper_bound(ud::kGraphemeRuns, ud::kGraphemeRuns + ud::kGraphemeRunsCount, key);
  return static_cast<uint8_t>(*(it - 1) & 31u);
}

}  // namespace

size_t grapheme_end(std::string_view s, size_t pos) {
  char32_t cp = decode_utf8(s, pos);
  uint8_t prev = grapheme_class(cp);
  bool emoji_zwj = (prev & kPictographic) != 0;  // GB11: ExtPict Extend* ZWJ so far (ZWJ seen: prev is kZWJ)
  int regional = (prev & 31) == kRI ? 1 : 0;     // GB12/13: regional indicators in a row
  while (pos < s.size()) {
    size_t next = pos;
    const uint8_t cur_full = grapheme_class(decode_utf8(s, next));
    const uint8_t a = prev & 31, b = cur_full & 31;
    bool join;
    if (a == kCR && b == kLF) join = true;                                                      // GB3
    else if (a == kCR || a == kLF || a == kControl || b == kCR || b == kLF || b == kControl) join = false;  // GB4, GB5
    else if (a == kL && (b == kL || b == kV || b == kLV || b == kLVT)) join = true;             // GB6
    else if ((a == kLV || a == kV) && (b == kV || b == kT)) join = true;                        // GB7
    else if ((a == kLVT || a == kT) && b == kT) join = true;                                    // GB8
    else if (b == kExtend || b == kZWJ || b == kSpacingMark) join = true;                       // GB9, GB9a
    else if (a == kPrepend) join = true;                                                        // GB9b
    else if (a == kZWJ && emoji_zwj && (cur_full & kPictographic)) join = true;                 // GB11
    else if (a == kRI && b == kRI) join = regional % 2 == 1;                                    // GB12, GB13
    else join = false;                                                                          // GB999
    if (!join) break;
    // Track GB11's ExtPict Extend* ZWJ and GB12's run of regional indicators.
    if (cur_full & kPictographic) emoji_zwj = true;
    else if (b != kExtend && b != kZWJ) emoji_zwj = false;
    regional = b == kRI ? regional + 1 : 0;
    prev = cur_full;
    pos = next;
  }
  return pos;
}

SplitClass split_class(char32_t cp) {
  if (cp > 0x10FFFF) return SplitClass::kOther;
  const uint32_t key = (static_cast<uint32_t>(cp) << 2) | 3u;
  const uint32_t* it = std::upper_bound(ud::kSplitRuns, ud::kSplitRuns + ud::kSplitRunsCount, key);
  return static_cast<SplitClass>(*(it - 1) & 3u);
}

size_t leading_white_space_end(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    size_t next = pos;
    if (split_class(decode_utf8(s, next)) != SplitClass::kSpace) break;
    pos = next;
  }
  return pos;
}

size_t trailing_white_space_start(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    size_t pos = start;
    if (split_class(decode_utf8(s, pos)) != SplitClass::kSpace || pos != end) break;
    end = start;
  }
  return end;
}

char32_t to_lower(char32_t cp) {
  if (cp < 128) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  const ud::LowerRun* end = ud::kLowerRuns + ud::kLowerRunsCount;
  const ud::LowerRun* it = std::upper_bound(ud::kLowerRuns, end, static_cast<uint32_t>(cp),
                                            [](uint32_t v, const ud::LowerRun& r) { return v < r.first; });
  if (it == ud::kLowerRuns) return cp;
  const ud::LowerRun& run = *(it - 1);
  if (cp > run.last) return cp;
  if (run.stride == 2 && (cp - run.first) % 2 != 0) return cp;
  return static_cast<char32_t>(static_cast<int64_t>(cp) + run.delta);
}

int strip_accents(char32_t cp, char32_t out[3]) {
  if (cp < 0xC0) {
    out[0] = cp;
    return 1;
  }
  if (cp >= 0xAC00 && cp <= 0xD7A3) {  // Hangul: S = L V [T]
    const char32_t s = cp - 0xAC00;
    out[0] = 0x1100 + s / (21 * 28);
    out[1] = 0x1161 + (s % (21 * 28)) / 28;
    if (s % 28 == 0) return 2;
    out[2] = 0x11A7 + s % 28;
    return 3;
  }
  if (char_class(cp) == CharClass::kMark) return 0;
  const size_t pairs = ud::kStripSingleCount / 2;
  size_t lo = 0, hi = pairs;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (ud::kStripSingle[2 * mid] < cp) lo = mid + 1; else hi = mid;
  }
  if (lo < pairs && ud::kStripSingle[2 * lo] == cp) {
    out[0] = ud::kStripSingle[2 * lo + 1];
    return 1;
  }
  const ud::StripMulti* mend = ud::kStripMulti + ud::kStripMultiCount;
  const ud::StripMulti* m = std::lower_bound(ud::kStripMulti, mend, static_cast<uint32_t>(cp),
                                             [](const ud::StripMulti& e, uint32_t v) { return e.cp < v; });
  if (m != mend && m->cp == cp) {
    int n = 0;
    for (uint32_t c : m->out)
      if (c != 0) out[n++] = c;
    return n;
  }
  out[0] = cp;
  return 1;
}

const char* unicode_version() { return ud::kUnicodeVersion; }

}  // namespace ragmig::text
