// Fuzz-ish robustness without libFuzzer: seeded random bytes into the tokenizer and random or mutated
// lines into the readers. The tokenizer must never throw; readers may throw only DataError or IoError.
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "support/test_support.h"
#include "text/beir.h"
#include "text/pairs.h"
#include "text/vocab_builder.h"
#include "text/wordpiece.h"
#include "text_test_util.h"

namespace ragmig::text {
namespace {

using ragmig::testing::ScratchDir;
using ragmig::testing::write_text;

// Bytes biased towards the interesting: ASCII, UTF-8 lead and continuation bytes, JSON syntax, NUL.
std::string random_bytes(std::mt19937_64& rng, size_t max_len) {
  static const std::string kSyntax = "{}[]\":,\\ \t\r0123456789-.eE_idtextitle";
  const size_t len = rng() % (max_len + 1);
  std::string s;
  for (size_t i = 0; i < len; ++i) {
    const uint64_t r = rng();
    switch (r % 6) {
      case 0: s.push_back(static_cast<char>(32 + (r >> 8) % 95)); break;
      case 1: s.push_back(static_cast<char>(0x80 + (r >> 8) % 0x40)); break;
      case 2: s.push_back(static_cast<char>(0xC0 + (r >> 8) % 0x40)); break;
      case 3: s.push_back(kSyntax[(r >> 8) % kSyntax.size()]); break;
      case 4: s.push_back(static_cast<char>((r >> 8) % 32)); break;
      default: s.push_back(static_cast<char>((r >> 8) & 0xFF)); break;
    }
  }
  return s;
}

std::string mutate(std::mt19937_64& rng, std::string s) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const size_t at = rng() % s.size();
    switch (rng() % 3) {
      case 0: s.erase(at, 1 + rng() % 3); break;
      case 1: s.insert(at, random_bytes(rng, 4)); break;
      default: s[at] = static_cast<char>(rng() & 0xFF); break;
    }
  }
  return s;
}

template <typename Fn>
void only_ragmig_errors(Fn&& fn, const std::string& input) {
  try {
    fn();
  } catch (const DataError&) {
  } catch (const IoError&) {
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected " << typeid(e).name() << ": " << e.what() << "\ninput: " << input;
  }
}

TEST(Robustness, TokenizerTakesAnyBytes) {
  std::vector<std::string> vocab = special_tokens();
  for (const char* t : {"a", "##a", "the", "##s", "é", "我", ",", "##\xC3\xA9"}) vocab.push_back(t);
  const WordPieceTokenizer lower(vocab, true), cased(vocab, false);
  std::mt19937_64 rng(20240611);
  for (int i = 0; i < 3000; ++i) {
    const std::string s = random_bytes(rng, 300);
    for (const WordPieceTokenizer* tok : {&lower, &cased}) {
      const auto words = tok->basic_tokenize(s);
      for (const auto& w : words) ASSERT_FALSE(w.empty());
      const auto ids = tok->encode(s, 2 + static_cast<int64_t>(i % 40));
      ASSERT_LE(ids.size(), static_cast<size_t>(2 + i % 40));
      ASSERT_EQ(ids.front(), tok->cls_id());
      ASSERT_EQ(ids.back(), tok->sep_id());
      for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok->vocab_size());
      tok->tokenize(s);
    }
  }
  VocabBuilderOptions opts;
  opts.vocab_size = 200;
  opts.min_frequency = 1;
  std::vector<std::string> texts;
  for (int i = 0; i < 200; ++i) texts.push_back(random_bytes(rng, 80));
  const auto built = build_wordpiece_vocab(texts, opts);
  EXPECT_LE(built.size(), 200u);
  EXPECT_NO_THROW(WordPieceTokenizer{built});
}

TEST(Robustness, ReadersThrowOnlyDataOrIoErrors) {
  ScratchDir dir;
  std::mt19937_64 rng(7);
  const std::vector<std::string> corpus_lines = {
      "{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"x\"}", "{\"_id\": 3, \"text\": \"caf\\u00e9\"}",
      "{\"_id\": \"d2\", \"title\": null, \"text\": \"y\", \"metadata\": {\"a\": [1, 2]}}"};
  const std::vector<std::string> qrels_lines = {"query-id\tcorpus-id\tscore", "q1\td1\t1", "301 0 FB-1 2"};
  const std::vector<std::string> pair_lines = {"{\"query\": \"q\", \"positive\": \"p\", \"negatives\": [\"n\"]}",
                                               "{\"query\": \"q\", \"pos\": [\"p\"], \"neg\": []}"};
  const auto random_file = [&](const std::vector<std::string>& seeds) {
    std::string content;
    const int lines = static_cast<int>(rng() % 6);
    for (int l = 0; l < lines; ++l) {
      const uint64_t r = rng() % 3;
      const std::string& seed = seeds[rng() % seeds.size()];
      content += r == 0 ? seed : r == 1 ? mutate(rng, seed) : random_bytes(rng, 60);
      content += "\n";
    }
    return content;
  };
  for (int i = 0; i < 500; ++i) {
    const std::string c = random_file(corpus_lines);
    const std::string q = random_file(qrels_lines);
    const std::string p = random_file(pair_lines);
    const std::string cp = write_text(dir / "corpus.jsonl", c);
    const std::string qp = write_text(dir / "qrels.tsv", q);
    const std::string pp = write_text(dir / "pairs.jsonl", p);
    only_ragmig_errors([&] { read_corpus(cp); }, c);
    only_ragmig_errors([&] { read_queries(cp); }, c);
    only_ragmig_errors([&] { read_qrels(qp); }, q);
    only_ragmig_errors([&] { read_pairs(pp); }, p);
  }
}

}  // namespace
}  // namespace ragmig::text
