// Out-of-line part of the error types: the message that RAGMIG_CHECK throws.
#include "core/error.h"

namespace ragmig {

void check_failed(const char* expr, const char* file, int line, const std::string& msg) {
  std::string what = std::string("internal error: check `") + expr + "` failed at " + file + ":" + std::to_string(line);
  if (!msg.empty()) what += ": " + msg;
  throw InternalError(what);
}

}  // namespace ragmig
