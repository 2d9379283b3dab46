// One-line LibTorch errors (see torch_error.h).
#include "model/torch_error.h"

#include <cstdlib>
#include <cstring>

namespace ragmig::model {

std::string describe_torch_error(const c10::Error& e, bool with_backtrace) {
  if (with_backtrace) return std::string("LibTorch: ") + e.what();
  std::string out = "LibTorch: ";
  bool at_line_start = false;
  for (const char c : std::string(e.what_without_backtrace())) {
    if (c == '\n') {
      at_line_start = true;
      continue;
    }
    if (at_line_start) out += "; ";
    at_line_start = false;
    out += c;
  }
  out += " (RAGMIG_DEBUG=1 shows LibTorch's stack trace)";
  return out;
}

bool debug_requested() {
  const char* v = std::getenv("RAGMIG_DEBUG");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace ragmig::model
