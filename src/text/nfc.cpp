#include "text/nfc.h"

#include <algorithm>

#include "text/unicode.h"
#include "text/unicode_tables.h"

namespace ragmig::text {
namespace ud = unicode_data;

namespace {

// Hangul syllables (de)compose by arithmetic (Unicode's section 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose(char32_t cp, std::u32string& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
    return;
  }
  const auto* end = ud::kCanonicalDecompositions + ud::kCanonicalDecompositionsCount;
  const auto* it = std::lower_bound(ud::kCanonicalDecompositions, end, static_cast<uint32_t>(cp),
                                    [](const uint32_t (&row)[3], uint32_t key) { return row[0] < key; });
  if (it == end || (*it)[0] != cp) {
    out.push_back(cp);
    return;
  }
  decompose((*it)[1], out);
  if ((*it)[2] != 0) decompose((*it)[2], out);
}

// The primary composite of a + b, or 0.
char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  const auto* end = ud::kCompositions + ud::kCompositionsCount;
  const auto* it = std::lower_bound(ud::kCompositions, end, std::pair<uint32_t, uint32_t>(a, b),
                                    [](const uint32_t (&row)[3], const std::pair<uint32_t, uint32_t>& key) {
                                      return std::pair(row[0], row[1]) < key;
                                    });
  return it != end && (*it)[0] == a && (*it)[1] == b ? (*it)[2] : 0;
}

// Canonical ordering (each run of non-starters stably sorted by class), then composition, appended to `out`.
void compose_into(std::u32string& cps, std::string& out) {
  for (size_t i = 1; i < cps.size(); ++i)  // insertion sort: runs of marks are short
    for (size_t j = i; j > 0; --j) {
      const int c = canonical_combining_class(cps[j]), p = canonical_combining_class(cps[j - 1]);
      if (c == 0 || p <= c) break;
      std::swap(cps[j], cps[j - 1]);
    }
  std::u32string composed;
  size_t starter = std::u32string::npos;
  for (const char32_t c : cps) {
    const int cc = canonical_combining_class(c);
    if (starter != std::u32string::npos) {
      // Blocked when something between the starter and c has class 0 or >= c's.
      const bool adjacent = composed.size() - 1 == starter;
      const int last = adjacent ? 0 : canonical_combining_class(composed.back());
      if (adjacent || (last != 0 && last < cc))
        if (const char32_t composite = compose(composed[starter], c)) {
          composed[starter] = composite;
          continue;
        }
    }
    if (cc == 0) starter = composed.size();
    composed.push_back(c);
  }
  for (const char32_t c : composed) append_utf8(out, c);
  cps.clear();
}

}  // namespace

int canonical_combining_class(char32_t cp) {
  if (cp < 0x300) return 0;
  const uint32_t key = (static_cast<uint32_t>(cp) << 8) | 0xFF;
  const uint32_t* runs = ud::kCombiningClassRuns;
  const uint32_t* it = std::upper_bound(runs, runs + ud::kCombiningClassRunsCount, key);
  return static_cast<int>(*(it - 1) & 0xFF);
}

std::string nfc(std::string_view text) {
  // U+0300 is the first code point NFC can change (or that can combine with what precedes it): its UTF-8 starts
  // with byte 0xCC, and every later code point's with 0xCC or above.
  if (std::none_of(text.begin(), text.end(), [](char c) { return static_cast<uint8_t>(c) >= 0xCC; }))
    return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::u32string cps;
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const char32_t cp = decode_utf8(text, pos);
    if (cp == kReplacementChar && pos - start == 1) {  // a malformed byte: kept, and a boundary
      compose_into(cps, out);
      out.push_back(text[start]);
      continue;
    }
    decompose(cp, cps);
  }
  compose_into(cps, out);
  return out;
}

}  // namespace ragmig::text
