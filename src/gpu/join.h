// Joining items into one string with a separator, for spec strings and messages. One helper instead of
// the `(s.empty() ? "" : ",") + x` idiom, which also trips GCC 12's false -Wrestrict warning.
#pragma once

#include <string>
#include <string_view>

namespace ragmig::gpu {

/// `text(item)` for each item of `items`, separated by `separator`.
template <typename Range, typename ToText>
std::string join(const Range& items, std::string_view separator, ToText&& text) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out.append(separator);
    first = false;
    out.append(text(item));
  }
  return out;
}

}  // namespace ragmig::gpu
