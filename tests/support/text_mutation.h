// Mutation fuzzing of text formats (TOML configs, JSON): one random edit at a time, driven by a hash stream so
// that every failure replays from its seed. A parser under test must accept the text or throw ragmig's own
// errors, never anything else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/splitmix.h"

namespace ragmig::testing {

// One random edit of `text`, driven by the hash stream `h`.
inline std::string mutate(std::string text, uint64_t& h) {
  auto next = [&h](uint64_t n) {
    h = splitmix64(h);
    return n == 0 ? 0 : h % n;
  };
  const std::string interesting = "\"'[]{}=.,#\n\\@:-0123456789eE+ \t";
  const size_t n = text.size();
  switch (next(6)) {
    case 0: {  // delete a few bytes
      const size_t at = next(n), len = 1 + next(8);
      text.erase(at, len);
      break;
    }
    case 1: {  // duplicate a range
      const size_t at = next(n), len = 1 + next(16);
      text.insert(at, text.substr(at, len));
      break;
    }
    case 2:  // replace a byte with a syntax character
      if (n) text[next(n)] = interesting[next(interesting.size())];
      break;
    case 3:  // replace a byte with any byte
      if (n) text[next(n)] = static_cast<char>(next(256));
      break;
    default: {  // splice: move, copy or drop a line
      std::vector<std::string> lines;
      for (size_t start = 0; start <= text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
      }
      const size_t a = next(lines.size()), b = next(lines.size());
      const uint64_t op = next(3);
      if (op == 0)
        std::swap(lines[a], lines[b]);
      else if (op == 1)
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(b), lines[a]);
      else
        lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(a));
      text.clear();
      for (size_t i = 0; i < lines.size(); ++i) text += (i ? "\n" : "") + lines[i];
    }
  }
  return text;
}

}  // namespace ragmig::testing
