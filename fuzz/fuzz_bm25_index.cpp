// Fuzzes the BM25 index reader (index/bm25_io.cpp): an input that starts as a saved file does (the envelope's
// magic) goes through load(): header, version, checksum, mapping; any other input is taken as the image
// itself, past the checksum, which is what a writer's bug or a crafted file would put in front of
// from_image(). Whatever it accepts is then searched: decoding postings must stay inside the image.
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_support.h"
#include "index/bm25_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ragmig::index::Bm25Index;
  const auto search = [](const Bm25Index& index) {
    for (const char* q : {"cat", "the quick brown fox", "dogs dogs sing"})
      for (const auto& hit : index.search(q, 5))
        if (hit.doc < 0 || hit.doc >= index.size()) ragmig::fuzz::finding("bm25", "a hit outside the index");
    if (index.size() > 0) index.score("cat dogs", index.size() - 1);
  };
  const std::string bytes(reinterpret_cast<const char*>(data), size);
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
