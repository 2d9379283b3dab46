// Declarations of the generated Unicode tables (unicode_tables.cpp, from gen_unicode_tables.py). Only
// unicode.cpp and nfc.cpp read them; everything else goes through the functions in unicode.h and nfc.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ragmig::text::unicode_data {

struct LowerRun {
  uint32_t first, last;
  int32_t delta;
  uint32_t stride;  // 1 or 2 between mapped code points; 0 for a run of one
};

struct StripMulti {
  uint32_t cp;
  uint32_t out[3];  // zero-padded
};

extern const char kUnicodeVersion[];
extern const uint32_t kClassRuns[];
extern const size_t kClassRunsCount;
extern const uint32_t kGraphemeRuns[];
extern const size_t kGraphemeRunsCount;
extern const uint32_t kSplitRuns[];
extern const size_t kSplitRunsCount;
extern const LowerRun kLowerRuns[];
extern const size_t kLowerRunsCount;
extern const uint32_t kStripSingle[];  // pairs: code point, replacement
extern const size_t kStripSingleCount;
extern const StripMulti kStripMulti[];
extern const size_t kStripMultiCount;
extern const uint32_t kCombiningClassRuns[];  // (first << 8) | canonical combining class
extern const size_t kCombiningClassRunsCount;
extern const uint32_t kCanonicalDecompositions[][3];  // cp, first, second (0: singleton); sorted by cp
extern const size_t kCanonicalDecompositionsCount;
extern const uint32_t kCompositions[][3];  // first, second, composite; sorted by (first, second)
extern const size_t kCompositionsCount;

}  // namespace ragmig::text::unicode_data
