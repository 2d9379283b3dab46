// String surgery on nlohmann's message formats (stable since 3.x): the id prefix, then the parse error's
// "parse error at " and "syntax error while parsing <what> - ".
#include "core/json_errors.h"

namespace ragmig {
namespace {

void erase_all(std::string& s, const std::string& what) {
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at)) s.erase(at, what.size());
}

}  // namespace

std::string describe_json_error(const nlohmann::json::exception& e, bool drop_line) {
  std::string s = e.what();
  if (s.rfind("[json.exception.", 0) == 0) {
    const size_t end = s.find("] ");
    if (end != std::string::npos) s.erase(0, end + 2);
  }
  erase_all(s, "parse error at ");
  erase_all(s, "parse error: ");
  for (const char* what : {"value", "object key", "object separator", "object", "array", "literal"})
    erase_all(s, std::string("syntax error while parsing ") + what + " - ");
  if (drop_line && s.rfind("line 1, ", 0) == 0) s.erase(0, 8);
  return s;
}

}  // namespace ragmig
