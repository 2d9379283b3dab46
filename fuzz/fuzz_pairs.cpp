// Fuzzes the training pairs files (text/pairs.cpp): JSONL rows in ragmig's, FlagEmbedding's and
// sentence-transformers' column names, or MS MARCO's TSV triples; the first byte picks the format.
// Equal positives share one key, and the keys number the distinct positives from 0.
#include <cstdint>
#include <map>
#include <string>

#include "fuzz_support.h"
#include "text/pairs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* name = data[0] % 2 ? "pairs.tsv" : "pairs.jsonl";
  const std::string path = ragmig::fuzz::write_input(name, data + 1, size - 1);
  ragmig::fuzz::expect_typed_errors([&] {
    std::map<std::string, int64_t> keys;
    for (const auto& ex : ragmig::text::read_pairs(path)) {
      const int64_t key = keys.emplace(ex.positive, static_cast<int64_t>(keys.size())).first->second;
      if (key != ex.positive_key) ragmig::fuzz::finding("pairs", "a positive under another key");
    }
  });
  return 0;
}
