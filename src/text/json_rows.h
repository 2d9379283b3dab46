// Shared plumbing for the JSON-lines readers (BEIR, training pairs): iterate rows with their line numbers
// and pull typed fields out, turning every nlohmann error or type mismatch into DataError(file, line).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace ragmig::text {

/// Calls fn(row, file, line) for each non-blank line of `path` (plain or .gz, resolved with
/// resolve_maybe_gz), the first `max_rows` of them when that is > 0. Bad JSON or a row that is not an object:
/// DataError(file, line). No rows at all: DataError("<file> is empty").
void for_each_json_row(const std::string& path,
                       const std::function<void(const nlohmann::json&, const std::string&, int64_t)>& fn,
                       int64_t max_rows = 0);

/// A string field; null or (when !required) absent gives "". Other types: DataError naming the field.
std::string json_string_field(const nlohmann::json& row, const char* key, const std::string& file,
                              int64_t line, bool required);

/// An id field: a string, or an integer written as decimal text. Required and non-empty.
std::string json_id_field(const nlohmann::json& row, const char* key, const std::string& file, int64_t line);

}  // namespace ragmig::text
