// Splitting keeps empty pieces; trimming takes only the named characters, from both ends only; numbers are read
// whole or not at all.
#include "core/strings.h"

#include <gtest/gtest.h>

namespace ragmig {
namespace {

TEST(Trim, RemovesTheNamedBlanksFromBothEndsOnly) {
  EXPECT_EQ(trim("  a b\t"), "a b");
  EXPECT_EQ(trim("a"), "a");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" \t \t"), "");
  EXPECT_EQ(trim("\r\n 42 \r\n"), "\r\n 42 \r\n") << "line ends are not blanks unless named";
  EXPECT_EQ(trim("\r\n 42 \r\n", " \t\r\n"), "42");
  EXPECT_EQ(trim("\r\n \n", " \t\r\n"), "");
}

TEST(Split, KeepsEveryPieceEmptyOnesIncluded) {
  EXPECT_EQ(split("a,b,,c", ','), (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(split("", ','), (std::vector<std::string>{""}));
  EXPECT_EQ(split(",", ','), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(split("a|b\n", '\n'), (std::vector<std::string>{"a|b", ""}));
}

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("lr", "lr"), 0u);
  EXPECT_EQ(edit_distance("lrr", "lr"), 1u);
  EXPECT_EQ(edit_distance("bach_size", "batch_size"), 1u);
  EXPECT_EQ(edit_distance("sed", "seed"), 1u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), edit_distance("lawn", "flaw"));
}

TEST(WholeNumber, AllOfTheTextInRangeOrNothing) {
  EXPECT_EQ(whole_number("42"), 42);
  EXPECT_EQ(whole_number("-7"), -7);
  EXPECT_EQ(whole_number("007"), 7);
  EXPECT_EQ(whole_number("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(whole_number("5", 5, 5), 5);
  // What std::stoll would have taken in part or with blanks, and what does not fit.
  for (const char* bad : {"", " 4", "4 ", "4\n", "8x", "+4", "4.0", "1e3", "0x10", "-", "9223372036854775808",
                          "99999999999999999999"})
    EXPECT_FALSE(whole_number(bad).has_value()) << bad;
  EXPECT_FALSE(whole_number("4", 5).has_value());
  EXPECT_FALSE(whole_number("6", 0, 5).has_value());
  EXPECT_FALSE(whole_number("-1", 0).has_value());
}

TEST(FiniteNumber, AllOfTheTextFiniteAndInRangeOrNothing) {
  EXPECT_EQ(finite_number("0.25"), 0.25);
  EXPECT_EQ(finite_number("-3"), -3.0);
  EXPECT_EQ(finite_number("1e3"), 1000.0);
  EXPECT_EQ(finite_number("2", 2, 2), 2.0);
  for (const char* bad : {"", " 1", "1 ", "1x", "+1", "inf", "-inf", "nan", "0x1p3", "1e999", "."})
    EXPECT_FALSE(finite_number(bad).has_value()) << bad;
  EXPECT_FALSE(finite_number("0.5", 1).has_value());
  EXPECT_FALSE(finite_number("3", 0, 2.5).has_value());
}

}  // namespace
}  // namespace ragmig
