// JSON string literals appended straight to a buffer, byte for byte as nlohmann::json's dump() writes them (UTF-8
// kept as it is; '"', '\' and control characters escaped), so that large JSONL files are written row by row
// without a JSON value built for each row (ragmig mine's pairs file).
#pragma once

#include <string>
#include <string_view>

namespace ragmig {

/// Appends `s` to `out` as a quoted JSON string. Throws std::invalid_argument naming the byte offset when `s` is
/// not valid UTF-8 (as nlohmann::json's dump() refuses it); `out` then holds a partial literal.
void append_json_string(std::string& out, std::string_view s);

}  // namespace ragmig
