// A small state machine over the characters: outside a word, in a bare word, in '...', in "...".
#include "core/shell_words.h"

#include <fmt/format.h>

#include <cctype>

#include "core/error.h"

namespace ragmig {
namespace {

// An unquoted character a shell would act on: | & ; < > ` and $ before a name, { or (.
bool shell_operator_at(const std::string& line, size_t i) {
  const char c = line[i];
  if (c == '|' || c == '&' || c == ';' || c == '<' || c == '>' || c == '`') return true;
  if (c != '$' || i + 1 == line.size()) return false;
  const char next = line[i + 1];
  return next == '{' || next == '(' || next == '_' || std::isalpha(static_cast<unsigned char>(next));
}

}  // namespace

std::vector<std::string> split_shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (i + 1 == line.size()) throw ConfigError("command line ends in a backslash: " + line);
      if (line[i + 1] != '\n') word += line[i + 1];
      ++i;
    } else if (c == '\'') {
      const size_t end = line.find('\'', i + 1);
      if (end == std::string::npos) throw ConfigError("unterminated ' in command line: " + line);
      word.append(line, i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (;; ++j) {
        if (j >= line.size()) throw ConfigError("unterminated \" in command line: " + line);
        if (line[j] == '"') break;
        if (line[j] == '\\' && j + 1 < line.size()) {
          const char next = line[j + 1];
          if (next == '"' || next == '\\' || next == '$' || next == '`') {
            word += next;
            ++j;
            continue;
          }
          if (next == '\n') {
            ++j;
            continue;
          }
        }
        word += line[j];
      }
      i = j;
    } else if (shell_operator_at(line, i)) {
      throw ConfigError(fmt::format(
          "'{}' at column {} of the command is shell syntax, and ragmig runs commands without a shell (no pipes, "
          "redirections, ';', '&', backquotes or $ expansion): quote it to pass it as it is, or run a shell: {}",
          line.substr(i, line[i] == '$' ? 2 : 1), i + 1, join_shell_words({"sh", "-c", line})));
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string join_shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    const bool plain = !w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-+=./:,@%") == std::string::npos;
    if (plain) {
      out += w;
      continue;
    }
    out += '\'';  // inside '...' everything is literal except ' itself, written as '\''
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

}  // namespace ragmig
