// Fuzzes the training pairs files (text/pairs.cpp): JSONL rows in ragmig's, FlagEmbedding's and
// sentence-transformers' column names, or MS MARCO's TSV triples; the first byte picks the format. Equal
// positives share one key, the keys numbering the distinct positives from 0. What is read is then made into a
// BEIR folder (text/beir_from_pairs.cpp, one query held out): its qrels name only its queries and documents.
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "fuzz_support.h"
#include "text/beir_from_pairs.h"
#include "text/pairs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ragmig::fuzz::finding;
  if (size == 0) return 0;
  const char* name = data[0] % 2 ? "pairs.tsv" : "pairs.jsonl";
  const std::string path = ragmig::fuzz::write_input(name, data + 1, size - 1);
  ragmig::fuzz::expect_typed_errors([&] {
    const auto examples = ragmig::text::read_pairs(path);
    std::map<std::string, int64_t> keys;
    for (const auto& ex : examples) {
      const int64_t key = keys.emplace(ex.positive, static_cast<int64_t>(keys.size())).first->second;
      if (key != ex.positive_key) finding("pairs", "a positive under another key");
    }
    const auto folder = ragmig::text::beir_from_pairs(examples, 1, ragmig::text::kTestSplitSeed, path);
    std::set<std::string> queries, documents;
    for (const auto& q : folder.queries) queries.insert(q.id);
    for (const auto& d : folder.corpus) documents.insert(d.id);
    if (documents.size() != folder.corpus.size() || queries.size() != folder.queries.size())
      finding("beir_from_pairs", "an id given twice");
    for (const auto* split : {&folder.train, &folder.test})
      for (const auto& e : *split)
        if (!queries.count(e.query_id) || !documents.count(e.doc_id))
          finding("beir_from_pairs", "a qrels row names an unknown id");
    if (folder.train.empty() || folder.train_pairs.empty()) finding("beir_from_pairs", "no train split");
  });
  return 0;
}
