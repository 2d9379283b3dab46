// Fuzzes the JSONL training triples (text/pairs.cpp): {"query", "positive"/"pos", "negatives"/"neg"} rows.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "text/pairs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ragmig::fuzz::write_input("pairs.jsonl", data, size);
  ragmig::fuzz::expect_typed_errors([&] { ragmig::text::read_pairs_jsonl(path); });
  return 0;
}
