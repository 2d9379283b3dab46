// Fuzzes BEIR's corpus.jsonl and queries.jsonl readers (text/beir.cpp over json_rows.cpp and the line reader,
// which also takes gzip by its magic bytes): the same bytes read as a corpus and as queries.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "text/beir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ragmig::fuzz::write_input("corpus.jsonl", data, size);
  ragmig::fuzz::expect_typed_errors([&] { ragmig::text::read_corpus(path); });
  ragmig::fuzz::expect_typed_errors([&] { ragmig::text::read_queries(path); });
  return 0;
}
