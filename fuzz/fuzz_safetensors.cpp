// Fuzzes the safetensors reader (model/safetensors.cpp, torch-free): the 8-byte length, the JSON header
// (dtypes, shapes, data_offsets, __metadata__) and the offsets checked against the file's size.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  ragmig::fuzz::expect_typed_errors([&] { ragmig::model::parse_safetensors(bytes, "fuzz.safetensors"); });
  return 0;
}
