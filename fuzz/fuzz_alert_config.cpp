// Fuzzes the [alerts] table of the monitoring config (monitor/alert_config.cpp): thresholds, the exec hook,
// deadlines as TOML date-times.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "monitor/alert_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ragmig::fuzz::expect_typed_errors([&] { ragmig::monitor::parse_alert_config(text, "fuzz.toml"); });
  return 0;
}
