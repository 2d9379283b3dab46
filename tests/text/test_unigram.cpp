// UnigramTokenizer and PrecompiledCharsmap on vocabularies and charsmaps built here: the best-scoring
// segmentation, <unk> fusion, the Metaspace and WhitespaceSplit pre-tokenizers, the normaliser steps, and the
// charsmap's trie format and grapheme rules (a darts-clone double array built by a small builder below).
// tests/hf checks whole texts against transformers' XLMRobertaTokenizer with SentencePiece's real charsmap.
#include "text/unigram.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "core/error.h"
#include "text/precompiled_charsmap.h"
#include "text/unicode.h"
#include "text_test_util.h"

namespace ragmig::text {
namespace {

using Strings = std::vector<std::string>;
using Ids = std::vector<int32_t>;

// XLM-R's special tokens (ids 0-3), then `pieces` with their scores.
TokenizerSpec unigram_spec(const std::vector<std::pair<std::string, double>>& pieces) {
  TokenizerSpec spec;
  spec.kind = TokenizerKind::kUnigram;
  spec.special = roberta_special_tokens();
  spec.vocab = {"<s>", "<pad>", "</s>", "<unk>"};
  spec.scores = {0, 0, 0, 0};
  for (const auto& [p, s] : pieces) {
    spec.vocab.push_back(p);
    spec.scores.push_back(s);
  }
  return spec;
}

// The charsmap blob of `mapping`: a darts-clone double array of its keys, built naively (each node's children, and
// its leaf at label 0, go at the first unused base whose slots are free), then the NUL-terminated replacements.
std::string charsmap_blob(const std::map<std::string, std::string>& mapping) {
  std::string normalized;
  std::map<std::string, uint32_t> keys;
  for (const auto& [key, replacement] : mapping) {
    keys[key] = static_cast<uint32_t>(normalized.size());
    normalized += replacement + '\0';
  }
  std::vector<uint32_t> units(1, 0);
  std::vector<bool> used(1, true);
  std::set<size_t> bases;
  const auto ensure = [&](size_t n) {
    if (units.size() < n) {
      units.resize(n, 0);
      used.resize(n, false);
    }
  };
  // Places the children of the node at `pos` whose keys share `prefix`.
  std::function<void(size_t, const std::string&)> place = [&](size_t pos, const std::string& prefix) {
    std::map<unsigned char, bool> children;
    bool leaf = false;
    for (const auto& [key, value] : keys)
      if (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0)
        children[static_cast<unsigned char>(key[prefix.size()])] = true;
      else if (key == prefix)
        leaf = true;
    size_t base = 1;
    for (;; ++base) {
      // A base serves one node only (as in darts-clone), or a lookup could take another node's child for its own.
      bool free = !bases.count(base) && !(leaf && base < used.size() && used[base]);
      for (const auto& [c, _] : children) free = free && !((base ^ c) < used.size() && used[base ^ c]);
      if (free) break;
    }
    bases.insert(base);
    ensure((base | 255) + 1);
    units[pos] |= static_cast<uint32_t>(base ^ pos) << 10;  // the offset that leads from pos to base
    if (leaf) {
      units[pos] |= 1u << 8;
      units[base] = (1u << 31) | keys[prefix];
      used[base] = true;
    }
    for (const auto& [c, _] : children) {
      units[base ^ c] = c;
      used[base ^ c] = true;
    }
    for (const auto& [c, _] : children) place(base ^ c, prefix + static_cast<char>(c));
  };
  place(0, "");
  std::string blob(4, '\0');
  const uint32_t size = static_cast<uint32_t>(units.size() * 4);
  std::memcpy(blob.data(), &size, 4);
  blob.append(reinterpret_cast<const char*>(units.data()), size);
  return blob + normalized;
}

TEST(Unigram, BestScoringSegmentationWins) {
  // "▁ab" alone (-5) loses to "▁a" + "b" (-1 + -1); "▁abc" (-1) beats both.
  const UnigramTokenizer tok(unigram_spec({{"\u2581a", -1}, {"b", -1}, {"\u2581ab", -5}, {"c", -2}, {"\u2581abc", -1}}));
  EXPECT_EQ(tok.tokenize("ab"), (Strings{"\u2581a", "b"}));
  EXPECT_EQ(tok.tokenize("abc"), (Strings{"\u2581abc"}));
  EXPECT_EQ(tok.encode("ab ab", 16), (Ids{0, 4, 5, 4, 5, 2})) << "<s> ... </s>, a piece per word";
  EXPECT_EQ(tok.encode_pieces("ab ab", 3), (Ids{4, 5, 4}));
  EXPECT_TRUE(tok.encode_pieces("").empty());
}

TEST(Unigram, UnknownCharactersFuseIntoOneUnk) {
  const UnigramTokenizer tok(unigram_spec({{"\u2581", -2}, {"a", -1}}));
  EXPECT_EQ(tok.encode_pieces("a"), (Ids{4, 5}));
  EXPECT_EQ(tok.encode_pieces("xyz"), (Ids{4, 3})) << "▁ then one <unk> for x, y and z";
  EXPECT_EQ(tok.encode_pieces("xaé"), (Ids{4, 3, 5, 3}));
}

TEST(Unigram, SpecialTokensInTheTextKeepTheirIdsAndEachPieceItsOwnPrefix) {
  TokenizerSpec spec = unigram_spec({{"\u2581a", -1}, {"<mask>", 0}});
  EXPECT_EQ(UnigramTokenizer(spec).encode_pieces("a<mask>a </s>"), (Ids{4, 5, 4, 3, 2}))
      << "▁a <mask> ▁a ▁(unknown) </s>";
}

TEST(Unigram, MetaspaceAndWhitespaceSplit) {
  TokenizerSpec spec = unigram_spec({{"\u2581", -3}, {"\u2581a", -1}, {"b", -1}});
  EXPECT_EQ(UnigramTokenizer(spec).pre_tokenize("a  b"), (Strings{"\u2581a", "\u2581", "\u2581b"}));
  spec.pre_tokenizer.whitespace_split = true;
  EXPECT_EQ(UnigramTokenizer(spec).pre_tokenize(" a \t b "), (Strings{"\u2581a", "\u2581b"}));
  spec.pre_tokenizer.prepend = MetaspaceSplit::Prepend::kFirst;
  EXPECT_EQ(UnigramTokenizer(spec).pre_tokenize("a b"), (Strings{"\u2581a", "b"}));
  EXPECT_EQ(UnigramTokenizer(spec).pre_tokenize(" a"), (Strings{"a"})) << "not the text's start";
  EXPECT_EQ(UnigramTokenizer(spec).pre_tokenize("a b", /*at_start=*/false), (Strings{"a", "b"}))
      << "text after a special token";
  spec.pre_tokenizer.prepend = MetaspaceSplit::Prepend::kNever;
  spec.pre_tokenizer.whitespace_split = false;
  spec.pre_tokenizer.split = false;
  EXPECT_EQ(UnigramTokenizer(spec).pre_tokenize("a b"), (Strings{"a\u2581b"}));
}

TEST(Unigram, NormaliserStepsRunInOrder) {
  TokenizerSpec spec = unigram_spec({});
  spec.normalizer = {{NormalizerStep::Kind::kReplace, "``", "\"", false, false},
                     {NormalizerStep::Kind::kStrip, "", "", true, true},
                     {NormalizerStep::Kind::kReplaceSpaceRuns, "", " ", false, false}};
  const UnigramTokenizer tok(spec);
  EXPECT_EQ(tok.normalize("\t ``a``   b  c \n"), "\"a\" b c");
  EXPECT_EQ(tok.normalize(" "), "");
  spec.normalizer = {{NormalizerStep::Kind::kPrepend, "", "\u2581", false, false}};
  EXPECT_EQ(UnigramTokenizer(spec).normalize("a"), "\u2581a");
  EXPECT_EQ(UnigramTokenizer(spec).normalize(""), "") << "not before an empty text";
}

TEST(PrecompiledCharsmap, ShortestMappedPrefixAndGraphemeClusters) {
  const PrecompiledCharsmap map(charsmap_blob({{"\uFF46", "f"},             // ｆ
                                               {"\u2460", "1"},             // ①
                                               {"e\u0301", "\u00E9"},       // e + combining acute -> é
                                               {"\r", " "},
                                               {"\u00E9", "e"},             // a rule longer keys start with
                                               {"\u00E9x", "never"}}),
                                "charsmap");
  EXPECT_EQ(map.normalize("ｆｆ①"), "ff1");
  EXPECT_EQ(map.normalize("cafe\u0301"), "caf\u00E9") << "the cluster e + U+0301 is one key";
  EXPECT_EQ(map.normalize("\u00E9x"), "ex") << "clusters, not keys, are the unit: é and x";
  EXPECT_EQ(map.normalize("\u2460\u0301"), "1") << "a short cluster is replaced whole by its prefix's mapping";
  EXPECT_EQ(map.normalize("\r\n"), " ") << "CR LF is one cluster";
  EXPECT_EQ(map.normalize("\u2460\u0301\u0301"), "1\u0301\u0301") << "clusters of 6 bytes go code point by code point";
  EXPECT_EQ(map.normalize("plain \xff text"), "plain \xff text");
  const std::string blob = charsmap_blob({{"a", "b"}});
  EXPECT_EQ(PrecompiledCharsmap(blob.substr(0, blob.size() - 1), "x").normalize("a"), "b") << "no terminator: to the end";
  testing::expect_error<DataError>([&] { PrecompiledCharsmap(blob.substr(0, 10), "tokenizer.json"); },
                                   {"tokenizer.json: precompiled_charsmap of 10 bytes"});
  // A damaged trie finds nothing rather than reading out of bounds.
  std::string damaged = blob;
  for (size_t i = 4; i + 4 <= blob.size() - 2; i += 4) damaged[i + 3] = '\x7f';
  EXPECT_EQ(PrecompiledCharsmap(damaged, "x").normalize("abc"), "abc");
}

TEST(Unigram, ScoresMustMatchTheVocabulary) {
  TokenizerSpec spec = unigram_spec({{"a", -1}});
  spec.scores.pop_back();
  testing::expect_error<DataError>([&] { UnigramTokenizer tok(spec, "tokenizer.json"); },
                                   {"tokenizer.json: 4 scores for 5 tokens"});
  spec = unigram_spec({{"a", std::nan("")}});
  testing::expect_error<DataError>([&] { UnigramTokenizer tok(spec); }, {"token 4 (\"a\")", "finite"});
}

TEST(Graphemes, ClustersFollowUax29) {
  const auto clusters = [](std::string_view s) {
    Strings out;
    for (size_t pos = 0; pos < s.size();) {
      const size_t end = grapheme_end(s, pos);
      out.emplace_back(s.substr(pos, end - pos));
      pos = end;
    }
    return out;
  };
  EXPECT_EQ(clusters("ab"), (Strings{"a", "b"}));
  EXPECT_EQ(clusters("e\u0301x"), (Strings{"e\u0301", "x"}));
  EXPECT_EQ(clusters("\r\n\n"), (Strings{"\r\n", "\n"}));
  EXPECT_EQ(clusters("\u1100\u1161\u11A8"), (Strings{"\u1100\u1161\u11A8"})) << "Hangul L V T";
  EXPECT_EQ(clusters("\U0001F44D\U0001F3FD!"), (Strings{"\U0001F44D\U0001F3FD", "!"})) << "emoji + skin tone";
  EXPECT_EQ(clusters("\U0001F468\u200D\U0001F469"), (Strings{"\U0001F468\u200D\U0001F469"})) << "ZWJ sequence";
  EXPECT_EQ(clusters("\U0001F1EB\U0001F1F7\U0001F1E9"), (Strings{"\U0001F1EB\U0001F1F7", "\U0001F1E9"})) << "flags";
  EXPECT_EQ(clusters("a\u200D\U0001F469"), (Strings{"a\u200D", "\U0001F469"})) << "ZWJ joins emoji only";
}

}  // namespace
}  // namespace ragmig::text
