// Fuzzes TREC run files as ragmig reads them back (eval/run_file.cpp): "qid Q0 docid rank score tag" lines.
#include <cstdint>
#include <string>

#include "eval/run_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ragmig::fuzz::write_input("run.trec", data, size);
  ragmig::fuzz::expect_typed_errors([&] { ragmig::eval::read_trec_run(path); });
  return 0;
}
