// Command lines as one string (`ragmig submit --cmd "..."`, job.cmd) split into argv the way a POSIX
// shell splits words — quotes and backslashes only; no variables, globs, pipes or redirections.
#pragma once

#include <string>
#include <vector>

namespace ragmig {

/// Splits on unquoted blanks. '...' keeps everything literally; "..." keeps everything but \" \\ \$ \`
/// and a backslash-newline; a backslash outside quotes escapes the next character. Throws ConfigError for
/// an unterminated quote, a trailing backslash, or unquoted shell syntax (| & ; < > ` $name $( ${), which
/// would not do what it says without a shell; the message shows the line wrapped in sh -c.
std::vector<std::string> split_shell_words(const std::string& line);

/// The inverse: words quoted only where needed, so split_shell_words(join_shell_words(v)) == v.
std::string join_shell_words(const std::vector<std::string>& words);

}  // namespace ragmig
