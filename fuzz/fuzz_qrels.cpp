// Fuzzes BEIR's qrels TSV (and TREC's "qid 0 docid rel" lines) through text::read_qrels, then the eval
// module's judgments built from them (eval/qrels.cpp).
#include <cstdint>
#include <string>

#include "eval/qrels.h"
#include "fuzz_support.h"
#include "text/beir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ragmig::fuzz::write_input("qrels.tsv", data, size);
  ragmig::fuzz::expect_typed_errors([&] {
    const auto qrels = ragmig::text::read_qrels(path);
    ragmig::eval::judgments_from(qrels);
  });
  return 0;
}
