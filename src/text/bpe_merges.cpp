#include "text/bpe_merges.h"

#include <queue>

#include "core/error.h"

namespace ragmig::text {
namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

}  // namespace

BpeMerges::BpeMerges(const std::vector<std::pair<std::string, std::string>>& rules,
                     const std::function<int32_t(std::string_view)>& find, const std::string& source) {
  merges_.reserve(rules.size());
  for (size_t r = 0; r < rules.size(); ++r) {
    const auto& [left, right] = rules[r];
    const int32_t l = find(left), rt = find(right), result = find(left + right);
    if (l < 0 || rt < 0 || result < 0)
      throw DataError(source + ": merge " + std::to_string(r + 1) + " (\"" + left + "\" \"" + right + "\"): \"" +
                      (l < 0    ? left
                       : rt < 0 ? right
                                : left + right) +
                      "\" is not in the vocabulary");
    merges_.insert_or_assign(pair_key(l, rt), Merge{static_cast<int32_t>(r), result});
  }
}

void BpeMerges::apply(std::vector<int32_t>& symbols) const {
  const int32_t n = static_cast<int32_t>(symbols.size());
  if (n < 2) return;
  // A doubly linked list over the symbols; merging folds the right one into the left one.
  std::vector<int32_t> prev(n), next(n);
  for (int32_t i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  struct Candidate {
    int32_t rank, pos, left, right, result;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  const auto offer = [&](int32_t pos) {
    if (pos < 0 || next[pos] < 0) return;
    const auto it = merges_.find(pair_key(symbols[pos], symbols[next[pos]]));
    if (it != merges_.end()) heap.push({it->second.rank, pos, symbols[pos], symbols[next[pos]], it->second.result});
  };
  for (int32_t i = 0; i + 1 < n; ++i) offer(i);
  std::vector<bool> gone(n, false);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    // Stale when either symbol has changed since the candidate was offered.
    if (gone[c.pos] || next[c.pos] < 0 || symbols[c.pos] != c.left || symbols[next[c.pos]] != c.right) continue;
    const int32_t right = next[c.pos];
    symbols[c.pos] = c.result;
    gone[right] = true;
    next[c.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = c.pos;
    offer(prev[c.pos]);
    offer(c.pos);
  }
  int32_t kept = 0;
  for (int32_t i = 0; i < n; ++i)
    if (!gone[i]) symbols[kept++] = symbols[i];
  symbols.resize(kept);
}

}  // namespace ragmig::text
