// The tokens a text is searched for before it is tokenised (special and added tokens, tokenizer.h) as a trie over
// their bytes: the leftmost occurrence of any of them from a position, the longest where several begin there. One
// pass over the text whatever their number (Gemma 3's tokenizer.json lists thousands: <unused0> ...), where searching
// for each in turn costs one pass per token.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ragmig::text {

class TokenTrie {
 public:
  /// `names`: non-empty strings; a repeated one keeps its first index.
  explicit TokenTrie(const std::vector<std::string>& names = {});

  struct Match {
    size_t at = std::string_view::npos;  ///< where it begins, npos for none
    int32_t index = -1;                  ///< into names, -1 for none
  };
  /// The leftmost name in `text` beginning at or after `from`, the longest of those beginning there.
  Match find(std::string_view text, size_t from) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> next;  // byte -> node, for all but the root
    int32_t index = -1;                             // the name ending here
  };
  int32_t child(int32_t node, uint8_t byte) const;

  std::vector<Node> nodes_;                  // nodes_[0] is the root
  std::array<int32_t, 256> root_children_;  // the root's next node per byte, -1 for none
};

}  // namespace ragmig::text
