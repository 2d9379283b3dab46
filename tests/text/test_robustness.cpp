// Fuzz-ish robustness without libFuzzer: seeded random bytes into the tokenizer and random or mutated
// lines into the readers. The tokenizer must never throw; readers may throw only DataError or IoError.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/error.h"
#include "support/byte_level_tokenizers.h"
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

// Every other tokenizer kind, in each layout ragmig reads, on random bytes (malformed UTF-8, control characters,
// special tokens' pieces): no throw, ids inside the vocabulary, the limit kept, the framing intact.
TEST(Robustness, EveryTokenizerKindTakesAnyBytes) {
  std::vector<TokenizerSpec> specs;
  const auto with_merges = [](TokenizerSpec t, const std::vector<std::pair<std::string, std::string>>& merges) {
    for (const auto& [left, right] : merges) {
      for (const std::string& token : {left, right, left + right})
        if (std::find(t.vocab.begin(), t.vocab.end(), token) == t.vocab.end()) t.vocab.push_back(token);
      t.merges.emplace_back(left, right);
    }
    return t;
  };
  specs.push_back(with_merges(testing::roberta_style_tokenizer(), {{"a", "b"}, {"\u0120", "ab"}}));
  specs.push_back(with_merges(testing::qwen_style_tokenizer(), {{"a", "b"}, {"ab", "c"}}));
  const std::vector<std::pair<std::string, std::string>> sp_merges = {
      {"\u2581", "a"}, {"\u2581", "\u2581"}, {"a", "b"}};
  specs.push_back(with_merges(testing::gemma_style_tokenizer(), sp_merges));
  for (const auto prepend : {MetaspaceSplit::Prepend::kFirst, MetaspaceSplit::Prepend::kAlways}) {
    TokenizerSpec llama = with_merges(testing::llama_style_tokenizer(), sp_merges);
    llama.pre_tokenizer.prepend = prepend;
    specs.push_back(llama);
  }
  TokenizerSpec legacy = with_merges(testing::llama_style_tokenizer(), sp_merges);
  legacy.metaspace = false;
  legacy.normalizer = {{NormalizerStep::Kind::kPrepend, "", "\u2581", false, false},
                       {NormalizerStep::Kind::kReplace, " ", "\u2581", false, false}};
  specs.push_back(legacy);
  TokenizerSpec unigram;
  unigram.kind = TokenizerKind::kUnigram;
  unigram.special = roberta_special_tokens();
  unigram.vocab = {"<s>", "<pad>", "</s>", "<unk>", "<mask>", "\u2581", "\u2581a", "a", "b", "\u00e9"};
  unigram.scores = {0, 0, 0, 0, 0, -3, -1, -2, -2, -4};
  specs.push_back(unigram);
  unigram.pre_tokenizer.whitespace_split = true;
  unigram.pre_tokenizer.prepend = MetaspaceSplit::Prepend::kFirst;
  specs.push_back(unigram);

  std::mt19937_64 rng(20261207);
  for (const TokenizerSpec& spec : specs) {
    const auto tok = make_tokenizer(spec);
    for (int i = 0; i < 1500; ++i) {
      std::string s = random_bytes(rng, 120);
      if (rng() % 4 == 0) s.insert(rng() % (s.size() + 1), spec.special.sep);  // a special token's name inside
      const int64_t max_len = 2 + static_cast<int64_t>(i % 30);
      std::vector<int32_t> ids;
      ASSERT_NO_THROW(ids = tok->encode(s, max_len)) << static_cast<int>(spec.kind);
      ASSERT_LE(ids.size(), static_cast<size_t>(max_len));
      ASSERT_GE(ids.size(), spec.cls_first ? 2u : 1u);
      if (spec.cls_first) ASSERT_EQ(ids.front(), tok->cls_id());
      ASSERT_EQ(ids.back(), tok->sep_id());
      for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok->vocab_size());
    }
  }
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
