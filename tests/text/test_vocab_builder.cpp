// build_wordpiece_vocab: hand-known merges on tiny corpora, coverage of the training words, determinism,
// the size bound, and the SQuAD-scale timing the trainer relies on.
#include "text/vocab_builder.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "support/test_support.h"
#include "text/beir.h"
#include "text/wordpiece.h"

namespace ragmig::text {
namespace {

using Strings = std::vector<std::string>;

Strings with_specials(Strings rest) {
  Strings out = special_tokens();
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

TEST(VocabBuilder, HandKnownMerges) {
  VocabBuilderOptions opts;
  opts.vocab_size = 100;
  opts.min_frequency = 1;
  // Words: ab x3, abc x2 -> pairs (a,##b)=5, (##b,##c)=2 -> merge "ab", then (ab,##c)=2 -> "abc".
  const Strings got = build_wordpiece_vocab({"ab AB ab", "abc abc"}, opts);  // lower-cased
  EXPECT_EQ(got, with_specials({"a", "b", "c", "##a", "##b", "##c", "ab", "abc"}));
}

TEST(VocabBuilder, SizeLimitStopsMerges) {
  VocabBuilderOptions opts;
  opts.min_frequency = 1;
  opts.vocab_size = 12;
  EXPECT_EQ(build_wordpiece_vocab({"ab ab ab abc abc"}, opts),
            with_specials({"a", "b", "c", "##a", "##b", "##c", "ab"}));
  // Too small for the whole alphabet: the most frequent characters are kept, both forms each.
  opts.vocab_size = 7;
  EXPECT_EQ(build_wordpiece_vocab({"ab ab ab abc abc b"}, opts), with_specials({"b", "##b"}));
  opts.vocab_size = 4;
  EXPECT_THROW(build_wordpiece_vocab({"ab"}, opts), ConfigError);
}

TEST(VocabBuilder, MinFrequencyAppliesToCharactersAndMerges) {
  VocabBuilderOptions opts;
  opts.vocab_size = 100;
  opts.min_frequency = 3;
  // c is seen twice: not in the alphabet, so "abc" sits out; (a,##b) is seen 3 times in "ab" -> merged.
  EXPECT_EQ(build_wordpiece_vocab({"ab ab ab abc abc"}, opts), with_specials({"a", "b", "##a", "##b", "ab"}));
}

TEST(VocabBuilder, TiesGoToTheLexicographicallySmallestPair) {
  VocabBuilderOptions opts;
  opts.vocab_size = 100;
  opts.min_frequency = 1;
  // (x,##y) and (a,##b) both twice: "ab" first whatever the input order.
  EXPECT_EQ(build_wordpiece_vocab({"xy xy ab ab"}, opts),
            with_specials({"a", "b", "x", "y", "##a", "##b", "##x", "##y", "ab", "xy"}));
  EXPECT_EQ(build_wordpiece_vocab({"ab ab xy xy"}, opts), build_wordpiece_vocab({"xy xy ab ab"}, opts));
}

TEST(VocabBuilder, RepeatedSymbolsMergeLeftToRight) {
  VocabBuilderOptions opts;
  opts.vocab_size = 100;
  opts.min_frequency = 1;
  // "aaaa" = a ##a ##a ##a: (##a,##a)=2 beats (a,##a)=1 -> "##aa"; then a ##aa ##a: three pairs of 1,
  // smallest first: (##aa,##a) -> "##aaa", then (a,##aaa) -> "aaaa".
  EXPECT_EQ(build_wordpiece_vocab({"aaaa"}, opts), with_specials({"a", "##a", "##aa", "##aaa", "aaaa"}));
}

Strings sample_texts() {
  Strings texts;
  const Strings words = {"retrieval", "dense", "passage", "query", "encoder", "contrastive", "négative",
                         "batch", "Zürich", "naïve", "training", "the", "of", "and", "données", "我们"};
  uint64_t x = 12345;
  for (int t = 0; t < 400; ++t) {
    std::string s;
    for (int w = 0; w < 12; ++w) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      s += words[(x >> 33) % words.size()];
      s += (x >> 20) % 7 == 0 ? ", " : " ";
    }
    texts.push_back(s);
  }
  return texts;
}

TEST(VocabBuilder, TrainingWordsNeverBecomeUnknown) {
  VocabBuilderOptions opts;
  opts.vocab_size = 60;  // few merges: coverage must come from the alphabet
  opts.min_frequency = 1;
  const Strings texts = sample_texts();
  const Strings vocab = build_wordpiece_vocab(texts, opts);
  EXPECT_EQ(static_cast<int64_t>(vocab.size()), opts.vocab_size);
  const WordPieceTokenizer tok(vocab);
  for (const auto& t : texts)
    for (const auto& piece : tok.tokenize(t)) ASSERT_NE(piece, "[UNK]") << t;
}

TEST(VocabBuilder, DeterministicAndBounded) {
  VocabBuilderOptions opts;
  opts.vocab_size = 150;
  const Strings texts = sample_texts();
  const Strings a = build_wordpiece_vocab(texts, opts);
  const Strings b = build_wordpiece_vocab(texts, opts);
  EXPECT_EQ(a, b);
  EXPECT_LE(static_cast<int64_t>(a.size()), opts.vocab_size);
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), a.size());
  for (size_t i = 0; i < special_tokens().size(); ++i) EXPECT_EQ(a[i], special_tokens()[i]);
}

TEST(VocabBuilder, SquadAt8000) {
  RAGMIG_REQUIRE_DATA("beir/squad-train/corpus.jsonl.gz");
  const Corpus corpus = read_corpus((ragmig::testing::data_dir() / "beir/squad-train/corpus.jsonl").string());
  Strings texts;
  texts.reserve(corpus.docs.size());
  for (const auto& d : corpus.docs) texts.push_back(d.title + " " + d.text);
  VocabBuilderOptions opts;
  const Strings vocab = build_wordpiece_vocab(texts, opts);
  EXPECT_EQ(static_cast<int64_t>(vocab.size()), opts.vocab_size);
  const WordPieceTokenizer tok(vocab);
  // Frequent words are single pieces after 8000 merges.
  EXPECT_EQ(tok.tokenize("the university of"), (Strings{"the", "university", "of"}));
  int64_t unk = 0, pieces = 0;
  for (size_t i = 0; i < texts.size(); i += 50)
    for (const auto& p : tok.tokenize(texts[i])) unk += p == "[UNK]", ++pieces;
  EXPECT_LT(static_cast<double>(unk), 0.002 * static_cast<double>(pieces));
}

}  // namespace
}  // namespace ragmig::text
