// Plain text pieces: a line cut at a separator, whitespace off both ends, a number read whole. Each parser names the
// characters it treats as blanks (a CSV-like field's, or a command's output with its line ends) and words its own
// error (the file and line, or the spec and term) around these.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ragmig {

/// `s` without the leading and trailing characters found in `blanks`; empty when it holds nothing else.
std::string_view trim(std::string_view s, std::string_view blanks = " \t");

/// Whether `text` holds nothing but spaces, tabs, CRs and LFs (or nothing): a line to skip, a text with nothing
/// to embed.
bool is_blank(std::string_view text);

/// The pieces of `text` between `sep`s, empty ones included: n separators give n + 1 pieces ("" gives one).
std::vector<std::string> split(std::string_view text, char sep);

/// Every occurrence of `from` in `s` replaced by `to`, left to right, none overlapping (nothing for an empty `from`).
void replace_all(std::string& s, std::string_view from, std::string_view to);

/// Levenshtein distance (insertions, deletions, substitutions of one byte each): how far a misspelt key lies from
/// a known one.
size_t edit_distance(std::string_view a, std::string_view b);

/// All of `text` as a decimal integer (digits, an optional leading '-') in [least, most]; nullopt when it is empty,
/// holds anything else (blanks, '+', a fraction) or lies outside, int64 overflow included.
std::optional<int64_t> whole_number(std::string_view text, int64_t least = std::numeric_limits<int64_t>::min(),
                                    int64_t most = std::numeric_limits<int64_t>::max());

/// All of `text` as a finite decimal number (as strtod reads it, without a leading '+', hex or "inf") in
/// [least, most]; nullopt otherwise.
std::optional<double> finite_number(std::string_view text, double least = std::numeric_limits<double>::lowest(),
                                    double most = std::numeric_limits<double>::max());

}  // namespace ragmig
