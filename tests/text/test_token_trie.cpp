// TokenTrie: the leftmost name from a position, the longest of those beginning there, against searching for each
// name in turn (what Tokenizer did before it) on random texts over a small alphabet.
#include "text/token_trie.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace ragmig::text {
namespace {

// The reference: each name's first occurrence from `from`; the leftmost, then the longest.
TokenTrie::Match by_each_name(const std::vector<std::string>& names, std::string_view text, size_t from) {
  TokenTrie::Match best;
  for (size_t i = 0; i < names.size(); ++i) {
    const size_t at = text.find(names[i], from);
    if (at == std::string_view::npos) continue;
    if (at < best.at || (at == best.at && names[i].size() > names[static_cast<size_t>(best.index)].size()))
      best = {at, static_cast<int32_t>(i)};
  }
  return best;
}

TEST(TokenTrie, FindsTheLeftmostThenLongestName) {
  const std::vector<std::string> names = {"<s>", "<", "<unused1>", "<unused10>", "\u2581\u2581", "a"};
  const TokenTrie trie(names);
  const auto at = [&](std::string_view text, size_t from = 0) {
    const auto m = trie.find(text, from);
    return std::pair{m.at, m.index};
  };
  EXPECT_EQ(at("xx<unused10>y"), (std::pair<size_t, int32_t>{2, 3})) << "the longest beginning there";
  EXPECT_EQ(at("xx<unused1x"), (std::pair<size_t, int32_t>{2, 1})) << "a shorter name where the longer breaks off";
  EXPECT_EQ(at("bb\u2581\u2581\u2581"), (std::pair<size_t, int32_t>{2, 4}));
  EXPECT_EQ(at("<s>a", 1), (std::pair<size_t, int32_t>{3, 5})) << "from a position";
  EXPECT_EQ(at("xyz").first, std::string_view::npos);
  EXPECT_EQ(TokenTrie().find("abc", 0).index, -1) << "no names";
  EXPECT_EQ(TokenTrie({"ab", "ab"}).find("ab", 0).index, 0) << "a repeated name keeps its first index";
}

TEST(TokenTrie, AgreesWithSearchingForEachName) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab<>c";
  const auto random_string = [&](size_t most) {
    std::string s;
    for (size_t n = 1 + rng() % most; n > 0; --n) s += alphabet[rng() % alphabet.size()];
    return s;
  };
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> names;
    for (size_t n = 1 + rng() % 8; n > 0; --n) {
      std::string name = random_string(4);
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    const TokenTrie trie(names);
    const std::string text = random_string(30);
    for (size_t from = 0; from <= text.size(); ++from) {
      const auto mine = trie.find(text, from), theirs = by_each_name(names, text, from);
      ASSERT_EQ(mine.at, theirs.at) << text << " from " << from;
      ASSERT_EQ(mine.index, theirs.index) << text << " from " << from;
    }
  }
}

}  // namespace
}  // namespace ragmig::text
