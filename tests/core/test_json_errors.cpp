// nlohmann's parse and type errors reworded without its library ids, keeping where and what.
#include <gtest/gtest.h>

#include "core/json_errors.h"

namespace ragmig {
namespace {

std::string parse_error_of(const std::string& text, bool drop_line = false) {
  try {
    const auto parsed = nlohmann::json::parse(text);
    (void)parsed;
  } catch (const nlohmann::json::exception& e) {
    return describe_json_error(e, drop_line);
  }
  return "parsed";
}

TEST(JsonErrors, WhereAndWhatWithoutLibraryIds) {
  EXPECT_EQ(parse_error_of("{\"a\": oops}"), "line 1, column 7: invalid literal; last read: '\"a\": o'");
  EXPECT_EQ(parse_error_of("{\"a\": oops}", /*drop_line=*/true), "column 7: invalid literal; last read: '\"a\": o'");
  EXPECT_EQ(parse_error_of("{\n\"a\": 1,, }"), "line 2, column 8: unexpected ','; expected string literal");
  EXPECT_EQ(parse_error_of(""), "line 1, column 1: unexpected end of input; expected '[', '{', or a literal");
  for (const std::string text : {"[1,", "{\"a\" 1}", "tru", "\"\\x\"", "[1] x"})
    EXPECT_EQ(parse_error_of(text).find("json.exception"), std::string::npos) << parse_error_of(text);
  try {
    (void)nlohmann::json(3).get<std::string>();
    FAIL();
  } catch (const nlohmann::json::exception& e) {
    EXPECT_EQ(describe_json_error(e), "type must be string, but is number");
  }
}

}  // namespace
}  // namespace ragmig
