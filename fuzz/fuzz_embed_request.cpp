// Fuzzes the request bodies of `ragmig serve` (serve/embed_request.cpp): OpenAI's /v1/embeddings and TEI's
// /embed. Their typed error is RequestError (an HTTP status and the field), not ragmig::Error.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "serve/embed_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  ragmig::serve::RequestLimits limits;
  limits.max_inputs = 16;
  limits.max_text_bytes = 256;
  for (const auto parse : {&ragmig::serve::parse_openai_request, &ragmig::serve::parse_tei_request}) {
    ragmig::fuzz::expect_typed_errors([&] {
      try {
        parse(body, limits);
      } catch (const ragmig::serve::RequestError&) {
      }
    });
  }
  return 0;
}
