// The English analyser: word breaking after UAX #29 (as Lucene's StandardTokenizer), possessives, case,
// stop words and the Snowball stemmers, table-driven with expectations written out by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "index/analyzer.h"
#include "index/word_breaker.h"

namespace ragmig::index {
namespace {

struct BreakCase {
  friend std::ostream& operator<<(std::ostream& os, const BreakCase& c) { return os << c.name; }
  std::string name, text;
  std::vector<std::string> words;
};

class WordBreakTest : public ::testing::TestWithParam<BreakCase> {};

TEST_P(WordBreakTest, MatchesTheHandWrittenWords) { EXPECT_EQ(words_of(GetParam().text), GetParam().words); }

INSTANTIATE_TEST_SUITE_P(
    Cases, WordBreakTest,
    ::testing::Values(
        BreakCase{"spaces_and_punctuation", "Hello, world! (twice)", {"Hello", "world", "twice"}},
        BreakCase{"letters_join_across_dot_quote_colon", "U.S.A. don't a:b", {"U.S.A", "don't", "a:b"}},
        BreakCase{"digits_join_across_dot_comma_semicolon", "3.14 1,000 1;2", {"3.14", "1,000", "1;2"}},
        BreakCase{"mixed_letter_digit_runs", "covid19 v1.2 19th", {"covid19", "v1.2", "19th"}},
        BreakCase{"letter_dot_digit_breaks", "a.1 1.a", {"a", "1", "1", "a"}},
        BreakCase{"hyphen_and_slash_break", "covid-19 and/or", {"covid", "19", "and", "or"}},
        BreakCase{"trailing_and_leading_mid_chars_dropped", "'quoted' .5 end.", {"quoted", "5", "end"}},
        BreakCase{"underscore_joins", "foo_bar __init__ _", {"foo_bar", "__init__"}},
        BreakCase{"right_single_quote_joins", "it\xE2\x80\x99s", {"it\xE2\x80\x99s"}},
        BreakCase{"accented_latin_and_greek", "caf\xC3\xA9 \xCE\xB1-synuclein", {"caf\xC3\xA9", "\xCE\xB1", "synuclein"}},
        BreakCase{"combining_mark_attaches", "e\xCC\x81t\xC3\xA9", {"e\xCC\x81t\xC3\xA9"}},
        BreakCase{"symbols_break", "5\xC2\xB1" "2 p\xE2\x89\xA4" "0.05", {"5", "2", "p", "0.05"}},
        BreakCase{"ideographs_one_per_word", "\xE6\x9D\xB1\xE4\xBA\xAC", {"\xE6\x9D\xB1", "\xE4\xBA\xAC"}},
        BreakCase{"malformed_utf8_breaks", "ab\xFF" "cd", {"ab", "cd"}},
        BreakCase{"empty", "", {}}),
    [](const auto& info) { return info.param.name; });

TEST(WordBreak, LongRunsAreCutAt255CodePoints) {
  const std::string run(600, 'x');
  const auto words = words_of(run);
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[0].size(), 255u);
  EXPECT_EQ(words[1].size(), 255u);
  EXPECT_EQ(words[2].size(), 90u);
}

TEST(LowerCase, CoversTheScriptsOfEnglishCorpora) {
  EXPECT_EQ(lower_case(U'A'), U'a');
  EXPECT_EQ(lower_case(U'\u00C9'), U'\u00E9');  // É
  EXPECT_EQ(lower_case(U'\u00D7'), U'\u00D7');  // × is not a letter
  EXPECT_EQ(lower_case(U'\u0100'), U'\u0101');  // Ā
  EXPECT_EQ(lower_case(U'\u0141'), U'\u0142');  // Ł (odd-upper block)
  EXPECT_EQ(lower_case(U'\u0391'), U'\u03B1');  // Α
  EXPECT_EQ(lower_case(U'\u0410'), U'\u0430');  // А
  EXPECT_EQ(lower_case(U'\u0401'), U'\u0451');  // Ё
  EXPECT_EQ(lower_case(U'\u1E9E'), U'\u00DF');  // ẞ
  EXPECT_EQ(lower_case(U'\u4E00'), U'\u4E00');
}

struct AnalyzeCase {
  friend std::ostream& operator<<(std::ostream& os, const AnalyzeCase& c) { return os << c.name; }
  std::string name, text;
  Stemmer stemmer;
  std::vector<std::string> terms;
};

class AnalyzeTest : public ::testing::TestWithParam<AnalyzeCase> {};

TEST_P(AnalyzeTest, MatchesTheHandWrittenTerms) {
  Analyzer analyzer(GetParam().stemmer);
  EXPECT_EQ(analyzer.analyze(GetParam().text), GetParam().terms);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AnalyzeTest,
    ::testing::Values(
        AnalyzeCase{"possessive_case_stop_words", "The Cat's toys", Stemmer::kPorter, {"cat", "toi"}},
        AnalyzeCase{"possessive_with_right_quote", "ZÜRICH\xE2\x80\x99S lakes", Stemmer::kNone, {"z\xC3\xBCrich", "lakes"}},
        AnalyzeCase{"all_stop_words", "to be or not to be, that is the question", Stemmer::kPorter, {"question"}},
        AnalyzeCase{"only_stop_words", "To be or not to be", Stemmer::kPorter, {}},
        AnalyzeCase{"porter", "running generalizations studies relational", Stemmer::kPorter, {"run", "gener", "studi", "relat"}},
        AnalyzeCase{"porter2", "running generalizations studies relational", Stemmer::kEnglish, {"run", "general", "studi", "relat"}},
        AnalyzeCase{"no_stemming", "Running Studies", Stemmer::kNone, {"running", "studies"}},
        AnalyzeCase{"stop_words_before_stemming", "was has", Stemmer::kPorter, {"ha"}},
        AnalyzeCase{"empty", "  \t ", Stemmer::kPorter, {}}),
    [](const auto& info) { return info.param.name; });

TEST(Analyzer, StopWordsAreLucenesThirtyThree) {
  const auto& stops = english_stop_words();
  EXPECT_EQ(stops.size(), 33u);
  EXPECT_TRUE(std::is_sorted(stops.begin(), stops.end())) << "binary_search needs them sorted";
  EXPECT_TRUE(std::binary_search(stops.begin(), stops.end(), "the"));
  EXPECT_FALSE(std::binary_search(stops.begin(), stops.end(), "has"));
}

TEST(Analyzer, StemmerNamesRoundTrip) {
  for (Stemmer s : {Stemmer::kPorter, Stemmer::kEnglish, Stemmer::kNone}) EXPECT_EQ(parse_stemmer(to_string(s)), s);
  EXPECT_THROW(parse_stemmer("lovins"), std::exception);
}

}  // namespace
}  // namespace ragmig::index
