// Fuzzes the BM25 analyzer on the input as a text (each stemmer), and the BM25 index reader (index/bm25_io.cpp):
// an input that starts as a saved file does (the envelope's magic) goes through load(): header, version, checksum,
// mapping; any other input is taken as the image itself, past the checksum, which is what a writer's bug or a
// crafted file would put in front of from_image(). Whatever it accepts is then searched, the input among the
// queries: decoding postings must stay inside the image.
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_support.h"
#include "index/analyzer.h"
#include "index/bm25_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ragmig::index::Bm25Index;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  // Fixed queries, and the input's bytes as a query.
  const auto search = [&](const Bm25Index& index) {
    for (const std::string& q : {std::string("cat"), std::string("the quick brown fox"), std::string("dogs dogs sing"),
                                 bytes.substr(0, 4096)})
      for (const auto& hit : index.search(q, 5))
        if (hit.doc < 0 || hit.doc >= index.size()) ragmig::fuzz::finding("bm25", "a hit outside the index");
    if (index.size() > 0) index.score("cat dogs", index.size() - 1);
  };
  // The analyzer on the input as a text, with each stemmer (what indexing and every query go through).
  for (const auto stemmer : {ragmig::index::Stemmer::kPorter, ragmig::index::Stemmer::kEnglish,
                             ragmig::index::Stemmer::kNone})
    ragmig::fuzz::expect_typed_errors([&] { ragmig::index::Analyzer(stemmer).analyze(bytes.substr(0, 4096)); });
  ragmig::fuzz::expect_typed_errors([&] {
    if (bytes.rfind("RGMBM25\n", 0) == 0) {
      search(Bm25Index::load(ragmig::fuzz::write_input("index.bm25", data, size)));
    } else {
      auto image = std::make_shared<const std::string>(bytes);
      search(Bm25Index::from_image(*image, image, "fuzz image"));
    }
  });
  return 0;
}
