// SentencePieceBpeTokenizer on a vocabulary built here: spaces marked by the normaliser, merges over characters in
// rank order (leftmost among equals), byte fallback for characters the vocabulary lacks (and malformed bytes), the
// framing and truncation, and what it refuses. tests/hf checks whole texts against transformers' GemmaTokenizer.
#include "text/sp_bpe.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ragmig::text {
namespace {

// Gemma's special tokens (<pad> <eos> <bos> <unk> <mask>), the 256 byte tokens (ids 5..260), then `pieces`.
TokenizerSpec spec_with(const std::vector<std::string>& pieces,
                        const std::vector<std::pair<std::string, std::string>>& merges) {
  TokenizerSpec spec;
  spec.kind = TokenizerKind::kSentencePieceBpe;
  spec.special = {"<bos>", "<eos>", "<pad>", "<unk>", "<mask>"};
  spec.vocab = {"<pad>", "<eos>", "<bos>", "<unk>", "<mask>"};
  for (int b = 0; b < 256; ++b) spec.vocab.push_back(SentencePieceBpeTokenizer::byte_token(static_cast<uint8_t>(b)));
  spec.vocab.insert(spec.vocab.end(), pieces.begin(), pieces.end());
  spec.merges = merges;
  NormalizerStep spaces;
  spaces.kind = NormalizerStep::Kind::kReplace;
  spaces.text = " ";
  spaces.content = "\u2581";
  spec.normalizer = {spaces};
  return spec;
}

std::vector<std::string> pieces(const Tokenizer& tok, std::string_view text) {
  return tok.tokenize(text);
}

TEST(SentencePieceBpe, MergesCharactersInRankOrderAcrossMarkedSpaces) {
  const auto spec = spec_with({"\u2581", "a", "b", "c", "ab", "bc", "\u2581ab", "abc"},
                              {{"b", "c"}, {"a", "b"}, {"\u2581", "ab"}, {"ab", "c"}});
  const SentencePieceBpeTokenizer tok(spec);
  EXPECT_EQ(pieces(tok, "abc"), (std::vector<std::string>{"a", "bc"})) << "b c ranks before a b";
  EXPECT_EQ(pieces(tok, "ab ab"), (std::vector<std::string>{"ab", "\u2581ab"})) << "one word: no pre-tokenizer";
  EXPECT_EQ(pieces(tok, "  a"), (std::vector<std::string>{"\u2581", "\u2581", "a"}));
  EXPECT_EQ(pieces(tok, "abab"), (std::vector<std::string>{"ab", "ab"})) << "leftmost first among equal ranks";
  EXPECT_EQ(tok.encode("ab ab", 64), (std::vector<int32_t>{2, tok.find("ab"), tok.find("\u2581ab"), 1}))
      << "<bos> ... <eos>";
  EXPECT_EQ(tok.encode("abc abc abc", 4), (std::vector<int32_t>{2, tok.find("a"), tok.find("bc"), 1}));
}

TEST(SentencePieceBpe, CharactersTheVocabularyLacksFallBackToTheirBytes) {
  const SentencePieceBpeTokenizer tok(spec_with({"\u2581", "a"}, {}));
  EXPECT_EQ(pieces(tok, "a\u00e9"), (std::vector<std::string>{"a", "<0xC3>", "<0xA9>"}));
  EXPECT_EQ(pieces(tok, "\U0001F600"), (std::vector<std::string>{"<0xF0>", "<0x9F>", "<0x98>", "<0x80>"}));
  EXPECT_EQ(pieces(tok, std::string("a\xff\xc3", 3)), (std::vector<std::string>{"a", "<0xFF>", "<0xC3>"}))
      << "malformed UTF-8, byte by byte";
  EXPECT_EQ(pieces(tok, "<bos>a<eos>"), (std::vector<std::string>{"<bos>", "a", "<eos>"})) << "special tokens kept";
  EXPECT_EQ(tok.encode("", 8), (std::vector<int32_t>{2, 1}));
}

TEST(SentencePieceBpe, RefusesWhatItCannotRun) {
  auto spec = spec_with({"a"}, {});
  spec.vocab.erase(spec.vocab.begin() + 5 + 0x41);
  try {
    SentencePieceBpeTokenizer tok(spec, "tokenizer.json");
    ADD_FAILURE() << "a missing byte token accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.json: byte token \"<0x41>\" is not in the vocabulary"),
              std::string::npos)
        << e.what();
  }
  spec = spec_with({"a"}, {{"a", "b"}});
  EXPECT_THROW(make_tokenizer(spec), DataError) << "a merge whose half is not a token";
  spec = spec_with({"a"}, {});
  spec.normalizer[0].kind = NormalizerStep::Kind::kStrip;
  EXPECT_THROW(make_tokenizer(spec), DataError);
}

// Llama's and Mistral's two layouts of the same tokenizer, as the tokenizers library runs them: transformers 5's
// Metaspace ("first": a "▁" before the text's first part only, none where one is there already) and the hub's older
// normaliser (Prepend "▁" before every part, then Replace " "). They differ after a special token and before a
// leading space.
TEST(SentencePieceBpe, LlamasMetaspaceAndTheLegacyPrependNormaliser) {
  auto spec = spec_with({"\u2581", "a", "b", "\u2581a", "\u2581\u2581"}, {{"\u2581", "a"}, {"\u2581", "\u2581"}});
  spec.special = {"<bos>", "<eos>", "<pad>", "<unk>", "<mask>"};
  spec.normalizer.clear();
  spec.metaspace = true;
  spec.pre_tokenizer.split = false;
  spec.pre_tokenizer.prepend = MetaspaceSplit::Prepend::kFirst;
  const SentencePieceBpeTokenizer first(spec);
  using P = std::vector<std::string>;
  EXPECT_EQ(pieces(first, "a b"), (P{"\u2581a", "\u2581", "b"}));
  EXPECT_EQ(pieces(first, " a"), (P{"\u2581a"})) << "a leading space is the prepended one";
  EXPECT_EQ(pieces(first, "a<eos>a"), (P{"\u2581a", "<eos>", "a"})) << "nothing prepended after a special token";
  EXPECT_EQ(pieces(first, "<eos>a"), (P{"<eos>", "a"}));
  EXPECT_EQ(pieces(first, ""), P{});
  spec.pre_tokenizer.prepend = MetaspaceSplit::Prepend::kAlways;
  EXPECT_EQ(pieces(SentencePieceBpeTokenizer(spec), "a<eos>a"), (P{"\u2581a", "<eos>", "\u2581a"}));
  spec.pre_tokenizer.prepend = MetaspaceSplit::Prepend::kNever;
  EXPECT_EQ(pieces(SentencePieceBpeTokenizer(spec), "a a"), (P{"a", "\u2581a"}));
  spec.pre_tokenizer.split = true;
  EXPECT_THROW(make_tokenizer(spec), DataError) << "a Metaspace that splits";

  spec.metaspace = false;
  NormalizerStep prepend;
  prepend.kind = NormalizerStep::Kind::kPrepend;
  prepend.content = "\u2581";
  NormalizerStep spaces;
  spaces.kind = NormalizerStep::Kind::kReplace;
  spaces.text = " ";
  spaces.content = "\u2581";
  spec.normalizer = {prepend, spaces};
  const SentencePieceBpeTokenizer legacy(spec);
  EXPECT_EQ(pieces(legacy, "a b"), (P{"\u2581a", "\u2581", "b"}));
  EXPECT_EQ(pieces(legacy, " a"), (P{"\u2581", "\u2581a"})) << "prepended before the space's own";
  EXPECT_EQ(pieces(legacy, "a<eos>a"), (P{"\u2581a", "<eos>", "\u2581a"})) << "before every part";
  EXPECT_EQ(legacy.encode("", 8), (std::vector<int32_t>{2, 1})) << "not before an empty text";
}

}  // namespace
}  // namespace ragmig::text
