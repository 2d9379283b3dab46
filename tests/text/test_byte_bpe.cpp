// ByteBpeTokenizer: GPT-2's split against Python's `regex` module running GPT-2's pattern (outputs checked by
// hand), the byte alphabet, merge order and truncation on a vocabulary built here. tests/hf checks whole texts
// against transformers' RobertaTokenizer.
#include "text/byte_bpe.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include "core/error.h"

#include "text/unicode.h"
#include "text_test_util.h"

namespace ragmig::text {
namespace {

using Strings = std::vector<std::string>;
using Views = std::vector<std::string_view>;

// GPT-2's character of each byte, as UTF-8.
std::string byte_token(uint8_t b) {
  std::string s;
  append_utf8(s, ByteBpeTokenizer::byte_char(b));
  return s;
}

// RoBERTa's special tokens, then the 256 byte characters (ids 5..260), then the merges' results in order.
TokenizerSpec spec_with(const std::vector<std::pair<std::string, std::string>>& merges) {
  TokenizerSpec spec;
  spec.kind = TokenizerKind::kByteBpe;
  spec.special = roberta_special_tokens();
  spec.vocab = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
  for (int b = 0; b < 256; ++b) spec.vocab.push_back(byte_token(static_cast<uint8_t>(b)));
  for (const auto& [l, r] : merges) spec.vocab.push_back(l + r);
  spec.merges = merges;
  return spec;
}

int32_t byte_id(char c) { return 5 + static_cast<uint8_t>(c); }

TEST(ByteBpe, ByteAlphabetIsGpt2s) {
  EXPECT_EQ(ByteBpeTokenizer::byte_char('a'), U'a');
  EXPECT_EQ(ByteBpeTokenizer::byte_char('!'), U'!');
  EXPECT_EQ(ByteBpeTokenizer::byte_char(' '), U'\u0120') << "Ġ";
  EXPECT_EQ(ByteBpeTokenizer::byte_char('\n'), U'\u010A') << "Ċ";
  EXPECT_EQ(ByteBpeTokenizer::byte_char(0), U'\u0100');
  EXPECT_EQ(ByteBpeTokenizer::byte_char(0xAD), U'\u0143') << "the soft hyphen is not printable";
  EXPECT_EQ(ByteBpeTokenizer::byte_char(0xFF), U'\u00FF');
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) seen.insert(ByteBpeTokenizer::byte_char(static_cast<uint8_t>(b)));
  EXPECT_EQ(seen.size(), 256u) << "one character per byte";
}

TEST(ByteBpe, SplitsAsGpt2sPattern) {
  const std::vector<std::pair<std::string, Views>> cases = {
      {"Hello world's  end\n\nok 123abc?!", {"Hello", " world", "'s", " ", " end", "\n", "\n", "ok", " 123", "abc", "?!"}},
      {"it's I'M we've 'll", {"it", "'s", " I", "'", "M", " we", "'ve", " '", "ll"}},
      {"  lead", {" ", " lead"}},
      {"a\t\tb ", {"a", "\t", "\t", "b", " "}},
      {"naïve 东京2024 ½", {"naïve", " 东京", "2024", " ½"}},
      {"x\u00a0y\u3000z", {"x", "\u00a0", "y", "\u3000", "z"}},
      {"?'s", {"?'", "s"}},
      {"", {}},
  };
  for (const auto& [text, pieces] : cases) EXPECT_EQ(ByteBpeTokenizer::pre_tokenize(text), pieces) << text;
}

// Qwen2's and Llama 3's patterns (a Split before a ByteLevel without its own): the pieces the tokenizers library
// 0.23 gives these texts (pre_tokenizers.Split(Regex(pattern), "isolated").pre_tokenize_str), which differ from
// GPT-2's in case-insensitive contractions (the long s folds to s), one leading non-letter joining a word, digits
// alone (Llama 3: up to three) and line breaks ending a run of whitespace or punctuation.
TEST(ByteBpe, SplitsAsQwen2sAndLlama3sPatterns) {
  const std::vector<std::pair<std::string, Views>> both = {
      {"I'M here, you'Re 'sure'", {"I", "'M", " here", ",", " you", "'Re", " '", "sure", "'"}},
      {"$hello  !!abc", {"$hello", " ", " !!", "abc"}},
      {"  \tabc", {"  ", "\tabc"}},
      {" \n hello\n\n  x", {" \n", " hello", "\n\n", " ", " x"}},
      {"x!!\n\nabc", {"x", "!!\n\n", "abc"}},
      {" 1", {" ", "1"}},
      {"a  ", {"a", "  "}},
      {"\xC5\xBF'\xC5\xBF 'x '\xC5\xBFx",
       {"\xC5\xBF", "'\xC5\xBF", " '", "x", " '",
        "\xC5\xBF"
        "x"}},
      {"'LLx x'Dy 'Kx", {"'LL", "x", " x", "'D", "y", " '", "Kx"}},
      {"\r\n\r\n", {"\r\n\r\n"}},
      {"''s", {"''", "s"}},
      {"x\u3000\u3000y", {"x", "\u3000", "\u3000y"}},
      {"", {}},
  };
  for (const BpeSplit split : {BpeSplit::kQwen2, BpeSplit::kLlama3})
    for (const auto& [text, pieces] : both) EXPECT_EQ(ByteBpeTokenizer::pre_tokenize(text, split), pieces) << text;
  const std::string text = "naïve café—東京タワー 2024年";
  EXPECT_EQ(ByteBpeTokenizer::pre_tokenize(text, BpeSplit::kQwen2),
            (Views{"naïve", " café", "—東京タワー", " ", "2", "0", "2", "4", "年"}));
  EXPECT_EQ(ByteBpeTokenizer::pre_tokenize(text, BpeSplit::kLlama3),
            (Views{"naïve", " café", "—東京タワー", " ", "202", "4", "年"}));
  EXPECT_EQ(ByteBpeTokenizer::pre_tokenize("12345 apples", BpeSplit::kLlama3), (Views{"123", "45", " apples"}));
}

// Any bytes (invalid UTF-8 included): every split's pieces are non-empty and make up the text in order.
TEST(ByteBpe, EverySplitCoversAnyBytesInOrder) {
  const std::string pool = "aZ9' \t\r\n!-\xC3\xA9\xE6\x9D\xB1\xE3\x80\x80\xC5\xBF\xCC\x81\xFF\x80";
  std::mt19937 rng(5);
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    for (size_t n = rng() % 24; n > 0; --n) text += pool[rng() % pool.size()];
    for (const BpeSplit split : {BpeSplit::kGpt2, BpeSplit::kQwen2, BpeSplit::kLlama3}) {
      std::string joined;
      for (const std::string_view piece : ByteBpeTokenizer::pre_tokenize(text, split)) {
        ASSERT_FALSE(piece.empty()) << static_cast<int>(split);
        joined += piece;
      }
      ASSERT_EQ(joined, text) << static_cast<int>(split);
    }
  }
}

// $A sep (cls_first false): no cls before the pieces, and truncation leaves room for sep alone.
TEST(ByteBpe, AppendedTokenFramingHasNoCls) {
  TokenizerSpec spec = spec_with({{"a", "b"}});
  spec.bpe_split = BpeSplit::kQwen2;
  spec.cls_first = false;
  const ByteBpeTokenizer tok(spec);
  const int32_t ab = 261;
  EXPECT_EQ(tok.encode("ab", 8), (std::vector<int32_t>{ab, 2}));
  EXPECT_EQ(tok.encode("ab ab ab", 3), (std::vector<int32_t>{ab, byte_id(' '), 2}));
  EXPECT_EQ(tok.encode("", 8), (std::vector<int32_t>{2}));
}

TEST(ByteBpe, MergesApplyInRankOrderLeftmostFirst) {
  // "b c" outranks "a b", so "abc" is a + bc, and "a bc" then joins them.
  const ByteBpeTokenizer tok(spec_with({{"b", "c"}, {"a", "b"}, {"a", "bc"}, {"x", "x"}}));
  const int32_t bc = 261, ab = 262, abc = 263, xx = 264;
  EXPECT_EQ(tok.encode_pieces("abc"), (std::vector<int32_t>{abc})) << "a b first would leave ab + c";
  EXPECT_EQ(tok.encode_pieces("bc"), (std::vector<int32_t>{bc}));
  EXPECT_EQ(tok.encode_pieces("ab"), (std::vector<int32_t>{ab}));
  EXPECT_EQ(tok.encode_pieces("xxx"), (std::vector<int32_t>{xx, byte_id('x')})) << "leftmost pair first";
  EXPECT_EQ(tok.encode_pieces("ab c"), (std::vector<int32_t>{ab, byte_id(' '), byte_id('c')}))
      << "no merge across pieces";
  EXPECT_EQ(tok.encode("abc", 8), (std::vector<int32_t>{0, abc, 2})) << "<s> ... </s>";
  EXPECT_EQ(tok.pad_id(), 1);
  EXPECT_EQ(tok.mask_id(), 4);
  EXPECT_EQ(tok.tokenize("ab c"), (Strings{"ab", "Ġ", "c"}));
}

TEST(ByteBpe, LongPiecesMergeFullyAndTruncationStopsEarly) {
  const ByteBpeTokenizer tok(spec_with({{"a", "a"}, {"aa", "aa"}, {"aaaa", "aaaa"}}));
  const int32_t a8 = 263;
  const std::vector<int32_t> ids = tok.encode_pieces(std::string(8 * 1000, 'a'));
  EXPECT_EQ(ids, std::vector<int32_t>(1000, a8));
  EXPECT_EQ(tok.encode_pieces("a b c d", 2), (std::vector<int32_t>{byte_id('a'), byte_id(' ')}));
  EXPECT_EQ(tok.encode("a b c d", 3), (std::vector<int32_t>{0, byte_id('a'), 2}));
  EXPECT_TRUE(tok.encode_pieces("a b", 0).empty());
}

TEST(ByteBpe, PrefixSpaceAndRawBytes) {
  TokenizerSpec spec = spec_with({{"Ġ", "a"}});
  const int32_t space_a = 261;
  EXPECT_EQ(ByteBpeTokenizer(spec).encode_pieces("a"), (std::vector<int32_t>{byte_id('a')}));
  spec.add_prefix_space = true;
  const ByteBpeTokenizer prefixed(spec);
  EXPECT_EQ(prefixed.encode_pieces("a"), (std::vector<int32_t>{space_a}));
  EXPECT_EQ(prefixed.encode_pieces(" a"), (std::vector<int32_t>{space_a})) << "no second space";
  EXPECT_TRUE(prefixed.encode_pieces("").empty()) << "none before an empty text";
  // Invalid UTF-8 is encoded as the bytes it is; é is two bytes.
  EXPECT_EQ(prefixed.encode_pieces("\xff"), (std::vector<int32_t>{byte_id(' '), byte_id('\xff')}));
  EXPECT_EQ(ByteBpeTokenizer(spec_with({})).encode_pieces("é").size(), 2u);
}

TEST(ByteBpe, RefusesMergesOutsideTheVocabularyByPosition) {
  TokenizerSpec spec = spec_with({{"a", "b"}});
  spec.merges.push_back({"q", "z"});  // "qz" is not in the vocabulary
  testing::expect_error<DataError>([&] { ByteBpeTokenizer tok(spec, "tokenizer.json"); },
                                   {"tokenizer.json: merge 2 (\"q\" \"z\"): \"qz\" is not in the vocabulary"});
  spec = spec_with({});
  spec.vocab.erase(spec.vocab.begin() + 3);  // <unk>
  testing::expect_error<DataError>([&] { ByteBpeTokenizer tok(spec); }, {"no <unk> token"});
  // A byte whose character is missing becomes <unk>.
  spec = spec_with({});
  spec.vocab[static_cast<size_t>(byte_id('~'))] = "tilde";
  EXPECT_EQ(ByteBpeTokenizer(spec).encode_pieces("~"), (std::vector<int32_t>{3}));
}

// Special tokens written in a text keep their ids, the text around them is tokenised piece by piece (each its own
// text, so add_prefix_space puts a space before each), and an lstrip token takes the whitespace before it.
TEST(ByteBpe, SpecialTokensInTheTextKeepTheirIds) {
  TokenizerSpec spec = spec_with({{"a", "b"}});
  const int32_t ab = 261;
  EXPECT_EQ(ByteBpeTokenizer(spec).encode_pieces("ab<mask></s>ab"), (std::vector<int32_t>{ab, 4, 2, ab}));
  EXPECT_EQ(ByteBpeTokenizer(spec).encode_pieces("ab <mask>"), (std::vector<int32_t>{ab, byte_id(' '), 4}));
  EXPECT_EQ(ByteBpeTokenizer(spec).encode_pieces("<s"), (std::vector<int32_t>{byte_id('<'), byte_id('s')}));
  spec.lstrip = {"<mask>"};
  spec.rstrip = {"</s>"};
  EXPECT_EQ(ByteBpeTokenizer(spec).encode_pieces("ab \t<mask></s>  ab"), (std::vector<int32_t>{ab, 4, 2, ab}));
  EXPECT_EQ(ByteBpeTokenizer(spec).encode_pieces("<pad><pad>ab", 2), (std::vector<int32_t>{1, 1})) << "the limit";
  spec.add_prefix_space = true;
  EXPECT_EQ(ByteBpeTokenizer(spec).encode_pieces("<s>ab"), (std::vector<int32_t>{0, byte_id(' '), ab}));
}

TEST(ByteBpe, MakeTokenizerBuildsTheSpecsKind) {
  const auto bpe = make_tokenizer(spec_with({{"a", "b"}}));
  EXPECT_NE(dynamic_cast<const ByteBpeTokenizer*>(bpe.get()), nullptr);
  EXPECT_EQ(bpe->encode_pieces("ab").size(), 1u);
  EXPECT_EQ(bpe->spec().merges.size(), 1u);
}

}  // namespace
}  // namespace ragmig::text

namespace ragmig::text {
namespace {

// ModernBERT's (GPT-NeoX's) layout: NFC before the split; added tokens matched in two passes as the tokenizers
// library does: the special and unnormalised ones first, then the normalised ones (runs of spaces) between them.
TEST(ByteBpe, NfcAndTwoPassesOfAddedTokens) {
  TokenizerSpec spec = spec_with({});
  spec.vocab.push_back("  ");  // 261
  spec.vocab.push_back("[unused0]");  // 262
  spec.normalized_added_tokens = {"  "};
  spec.added_tokens = {"[unused0]"};
  spec.lstrip = {"<mask>"};
  const auto plain = make_tokenizer(spec);
  EXPECT_EQ(plain->encode_pieces("a  b"), (std::vector<int32_t>{byte_id('a'), 261, byte_id('b')}));
  EXPECT_EQ(plain->encode_pieces("a  <mask>"), (std::vector<int32_t>{byte_id('a'), 4}))
      << "<mask> takes the spaces before it in the first pass: the run of spaces never shows";
  EXPECT_EQ(plain->encode_pieces("x[unused0]  "), (std::vector<int32_t>{byte_id('x'), 262, 261}));
  const std::string decomposed = "e\u0301";
  const std::vector<int32_t> bytes_of_decomposed = {byte_id('e'), byte_id('\xcc'), byte_id('\x81')};
  EXPECT_EQ(plain->encode_pieces(decomposed), bytes_of_decomposed);
  spec.normalizer = {NormalizerStep{.kind = NormalizerStep::Kind::kNfc}};
  EXPECT_EQ(make_tokenizer(spec)->encode_pieces(decomposed), (std::vector<int32_t>{byte_id('\xc3'), byte_id('\xa9')}))
      << "NFC makes it U+00E9, two bytes";
  spec.added_tokens = {"[unused1]"};
  EXPECT_THROW(make_tokenizer(spec), DataError) << "an added token the vocabulary lacks";
  spec.added_tokens.clear();
  spec.normalizer = {NormalizerStep{.kind = NormalizerStep::Kind::kStrip}};
  EXPECT_THROW(make_tokenizer(spec), DataError) << "byte-level BPE normalises with NFC only";
}

}  // namespace
}  // namespace ragmig::text
