// BPE's merge rules and the merge loop both BPE tokenizers run (byte-level BPE, byte_bpe.h; SentencePiece-style BPE
// with byte fallback, sp_bpe.h), as the tokenizers library runs them: the lowest-ranked rule whose pair is adjacent
// applies first, the leftmost among equals, until none applies.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ragmig::text {

class BpeMerges {
 public:
  /// The rules (the first applied first) over token ids, `find` giving a token's id or -1. Throws DataError naming
  /// `source` and the rule (its 1-based position) whose halves or result are not vocabulary tokens. A repeated rule
  /// takes its last rank, as in the tokenizers library.
  BpeMerges(const std::vector<std::pair<std::string, std::string>>& rules,
            const std::function<int32_t(std::string_view)>& find, const std::string& source);

  /// Merges the symbols (token ids) of one word in place.
  void apply(std::vector<int32_t>& symbols) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id) -> rank, merged id
};

}  // namespace ragmig::text
