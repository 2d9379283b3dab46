// Fuzzes <run>/control.json as the trainer reads it between steps (train/control_file.cpp): the scheduler's
// requests to a running worker. Every text ends in a request or a DataError; a request asks for no negative
// batch, chunk or step (0 is "unchanged").
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "train/control_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ragmig::fuzz::expect_typed_errors([&] {
    const auto r = ragmig::train::parse_control(text, "run/control.json");
    if (r.batch_size < 0 || r.chunk_size < 0 || r.after_step < 0)
      ragmig::fuzz::finding("control", "a negative batch, chunk or step passed");
  });
  return 0;
}
