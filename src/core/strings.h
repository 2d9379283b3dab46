// Plain text pieces: a line cut at a separator, whitespace off both ends. Each parser names the characters it treats
// as blanks (a CSV-like field's, or a command's output with its line ends).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ragmig {

/// `s` without the leading and trailing characters found in `blanks`; empty when it holds nothing else.
std::string_view trim(std::string_view s, std::string_view blanks = " \t");

/// The pieces of `text` between `sep`s, empty ones included: n separators give n + 1 pieces ("" gives one).
std::vector<std::string> split(std::string_view text, char sep);

}  // namespace ragmig
