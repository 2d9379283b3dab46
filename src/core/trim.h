// Whitespace off both ends of a string: each parser names the characters it treats as such (a CSV-like field's
// blanks, or a command's output with its line ends).
#pragma once

#include <string_view>

namespace ragmig {

/// `s` without the leading and trailing characters found in `blanks`; empty when it holds nothing else.
std::string_view trim(std::string_view s, std::string_view blanks = " \t");

}  // namespace ragmig
