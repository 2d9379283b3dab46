// NFC by hand-checked cases (Python's unicodedata on every decomposable code point: tests/hf, HfLive.Nfc*).
#include "text/nfc.h"

#include <gtest/gtest.h>

namespace ragmig::text {
namespace {

TEST(Nfc, ComposesReordersAndKeepsWhatIsAlreadyComposed) {
  EXPECT_EQ(nfc("plain ASCII and Latin-1: caf\u00e9 na\u00efve"), "plain ASCII and Latin-1: caf\u00e9 na\u00efve");
  EXPECT_EQ(nfc("cafe\u0301"), "caf\u00e9");
  EXPECT_EQ(nfc("e\u0301\u0323"), "\u1eb9\u0301") << "dot below (220) is ordered before acute (230), then composes";
  EXPECT_EQ(nfc("e\u0323\u0301"), "\u1eb9\u0301");
  EXPECT_EQ(nfc("\u212b"), "\u00c5") << "ANGSTROM SIGN's singleton decomposition";
  EXPECT_EQ(nfc("\u0958"), "\u0915\u093c") << "a composition exclusion stays decomposed";
  EXPECT_EQ(nfc("\ufb01 \u2460"), "\ufb01 \u2460") << "compatibility characters are NFKC's business";
  EXPECT_EQ(nfc("\u1112\u1161\u11ab"), "\ud55c") << "Hangul jamo L V T";
  EXPECT_EQ(nfc("\ud55c\u1100"), "\ud55c\u1100") << "a leading consonant does not join an LVT syllable";
  EXPECT_EQ(nfc("\u0301a"), "\u0301a") << "a mark with no starter before it";
  EXPECT_EQ(nfc("a\u0308\u0301"), "\u00e4\u0301") << "the second mark of the same class is blocked";
}

TEST(Nfc, MalformedBytesAreKeptAndSplitTheText) {
  const std::string bad = std::string("e\xff") + "\u0301";
  EXPECT_EQ(nfc(bad), bad) << "the mark after a malformed byte has no starter to join";
  EXPECT_EQ(nfc(std::string("cafe\u0301\xc3")), std::string("caf\u00e9\xc3"));
  EXPECT_EQ(nfc("\ufffd\u0301"), "\ufffd\u0301") << "a real U+FFFD is a character like any other";
}

TEST(Nfc, CombiningClasses) {
  EXPECT_EQ(canonical_combining_class('a'), 0);
  EXPECT_EQ(canonical_combining_class(0x301), 230);
  EXPECT_EQ(canonical_combining_class(0x323), 220);
  EXPECT_EQ(canonical_combining_class(0x93c), 7);
  EXPECT_EQ(canonical_combining_class(0x10FFFF), 0);
}

}  // namespace
}  // namespace ragmig::text
