// nlohmann's exceptions in ragmig's words: its messages carry a library id ("[json.exception.parse_error.101]")
// and its grammar terms; what a user needs is where in the text it went wrong and what was there. The readers
// of JSON inputs (BEIR .jsonl files, model folders' config files, safetensors headers, plan files) use this.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ragmig {

/// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while parsing value -
/// invalid literal; last read: 'x'" becomes "line 1, column 5: invalid literal; last read: 'x'", and a type
/// error "[json.exception.type_error.302] type must be string, but is number" becomes "type must be string,
/// but is number". `drop_line`: leave "line 1, " out (one line of a .jsonl file, whose line the caller names).
std::string describe_json_error(const nlohmann::json::exception& e, bool drop_line = false);

}  // namespace ragmig
