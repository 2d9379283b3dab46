// Fuzzes TREC run files as ragmig reads them back (eval/run_file.cpp): "qid Q0 docid rank score tag" lines; a run
// it accepts, written (write_trec_run), must read back and write again as the same file.
#include <cstdint>
#include <string>

#include "core/atomic_file.h"
#include "eval/run_file.h"
#include "fuzz_support.h"

namespace {

std::string written(const ragmig::eval::TrecRun& run, const std::string& name) {
  const std::string path = (ragmig::fuzz::scratch_dir() / name).string();
  ragmig::eval::write_trec_run(path, run, "fuzz");
  return ragmig::read_file(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ragmig::fuzz::write_input("run.trec", data, size);
  ragmig::fuzz::expect_typed_errors([&] {
    const auto run = ragmig::eval::read_trec_run(path);
    const std::string first = written(run, "first.trec");
    ragmig::fuzz::expect_round_trip("run_file", first, [&] {
      return written(ragmig::eval::read_trec_run((ragmig::fuzz::scratch_dir() / "first.trec").string()), "again.trec");
    });
  });
  return 0;
}
