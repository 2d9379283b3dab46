// append_json_string writes what nlohmann::json's dump() writes for the same text, and refuses what it refuses.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include "core/json_string.h"

namespace ragmig {
namespace {

// nlohmann's literal for `s`, or nullopt where it refuses `s` (invalid UTF-8).
std::optional<std::string> reference(const std::string& s) {
  try {
    return nlohmann::json(s).dump();
  } catch (const nlohmann::json::type_error&) {
    return std::nullopt;
  }
}

std::string hex(const std::string& s) {
  std::string h;
  for (const char c : s) h += fmt::format("{:02x} ", static_cast<unsigned char>(c));
  return h;
}

std::optional<std::string> ours(const std::string& s) {
  std::string out = "prefix ";
  try {
    append_json_string(out, s);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  EXPECT_EQ(out.rfind("prefix ", 0), 0u);  // appended, not replaced
  return out.substr(7);
}

TEST(JsonString, EscapesAsNlohmannDoes) {
  std::string every_control;
  for (int c = 0; c < 0x20; ++c) every_control.push_back(static_cast<char>(c));
  for (const std::string& s : {std::string(), std::string("plain"), std::string("say \"hi\" \\ back"),
                              every_control, std::string("\x7f del"), std::string("caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87"),
                              std::string("emoji \xf0\x9f\x98\x80 end"), std::string("a\0b", 3)}) {
    const auto want = reference(s);
    ASSERT_TRUE(want) << s;
    EXPECT_EQ(ours(s), want) << s;
  }
  EXPECT_EQ(ours("\x01"), "\"\\u0001\"");
}

TEST(JsonString, RefusesInvalidUtf8NamingTheOffset) {
  for (const std::string& s : {std::string("ab\xff"), std::string("\xc0\xaf"), std::string("\xed\xa0\x80"),
                              std::string("\xf4\x90\x80\x80"), std::string("\xe4\xb8"), std::string("\x80")}) {
    EXPECT_FALSE(reference(s)) << "nlohmann accepts it: the case is wrong";
    EXPECT_FALSE(ours(s));
  }
  std::string out;
  try {
    append_json_string(out, "ok \xe4\xb8");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "invalid UTF-8 byte at offset 3: 0xE4");
  }
}

// Random strings over bytes chosen to hit every branch: ASCII, controls, quotes, backslashes, lead and
// continuation bytes of every length, the bytes that bound overlong forms and surrogates, and 0xF5-0xFF.
TEST(JsonString, RandomStringsGiveNlohmannsOutputOrItsRefusal) {
  const std::string alphabet = std::string("a Z~\x7f\"\\\n\t\x01\x1f", 12) +
                               "\x80\x8f\x90\x9f\xa0\xbf\xc0\xc1\xc2\xdf\xe0\xe1\xec\xed\xee\xef\xf0\xf1\xf3\xf4\xf5\xff";
  std::mt19937_64 rng(20261206);
  std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1), length(0, 12);
  int valid = 0, invalid = 0;
  for (int n = 0; n < 200000; ++n) {
    std::string s(length(rng), ' ');
    for (char& c : s) c = alphabet[pick(rng)];
    const auto want = reference(s);
    ASSERT_EQ(ours(s), want) << hex(s);
    ++(want ? valid : invalid);
  }
  EXPECT_GT(valid, 20000);  // both sides of the rule were exercised
  EXPECT_GT(invalid, 20000);
}

}  // namespace
}  // namespace ragmig
