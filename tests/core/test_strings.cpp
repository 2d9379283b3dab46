// Splitting keeps empty pieces; trimming takes only the named characters, from both ends only.
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

}  // namespace
}  // namespace ragmig
