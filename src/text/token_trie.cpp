#include "text/token_trie.h"

namespace ragmig::text {

TokenTrie::TokenTrie(const std::vector<std::string>& names) : nodes_(1) {
  root_children_.fill(-1);
  for (size_t i = 0; i < names.size(); ++i) {
    int32_t node = 0;
    for (const char c : names[i]) {
      const auto byte = static_cast<uint8_t>(c);
      int32_t next = child(node, byte);
      if (next < 0) {
        next = static_cast<int32_t>(nodes_.size());
        nodes_.emplace_back();
        if (node == 0)
          root_children_[byte] = next;
        else
          nodes_[static_cast<size_t>(node)].next.emplace_back(byte, next);
      }
      node = next;
    }
    if (node != 0 && nodes_[static_cast<size_t>(node)].index < 0)
      nodes_[static_cast<size_t>(node)].index = static_cast<int32_t>(i);
  }
}

int32_t TokenTrie::child(int32_t node, uint8_t byte) const {
  if (node == 0) return root_children_[byte];
  for (const auto& [b, next] : nodes_[static_cast<size_t>(node)].next)
    if (b == byte) return next;
  return -1;
}

TokenTrie::Match TokenTrie::find(std::string_view text, size_t from) const {
  for (size_t at = from; at < text.size(); ++at) {
    int32_t node = root_children_[static_cast<uint8_t>(text[at])];
    int32_t longest = -1;
    for (size_t end = at + 1; node >= 0; ++end) {
      if (nodes_[static_cast<size_t>(node)].index >= 0) longest = nodes_[static_cast<size_t>(node)].index;
      if (end == text.size()) break;
      node = child(node, static_cast<uint8_t>(text[end]));
    }
    if (longest >= 0) return {at, longest};
  }
  return {};
}

}  // namespace ragmig::text
