// Trimming: only the named characters go, from both ends only; nothing but blanks gives empty.
#include "core/trim.h"

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

}  // namespace
}  // namespace ragmig
