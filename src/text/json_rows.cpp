// JSON-lines plumbing for the text readers; see json_rows.h. The one place where nlohmann exceptions are
// caught, so readers above it only ever throw ragmig errors.
#include "text/json_rows.h"

#include "core/error.h"
#include "core/json_errors.h"
#include "core/line_reader.h"

namespace ragmig::text {

using nlohmann::json;

void for_each_json_row(const std::string& path,
                       const std::function<void(const json&, const std::string&, int64_t)>& fn, int64_t max_rows) {
  LineReader reader(resolve_maybe_gz(path));
  const std::string& file = reader.path();
  std::string line;
  int64_t rows = 0;
  while ((max_rows <= 0 || rows < max_rows) && reader.next(line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const int64_t n = reader.line_number();
    json row;
    try {
      row = json::parse(line);
    } catch (const json::exception& e) {
      throw DataError(file, n, "not valid JSON: " + describe_json_error(e, /*drop_line=*/true));
    }
    if (!row.is_object()) throw DataError(file, n, "expected a JSON object per line");
    try {
      fn(row, file, n);
    } catch (const json::exception& e) {  // a reader that forgot to check a type
      throw DataError(file, n, "unexpected JSON content: " + describe_json_error(e));
    }
    ++rows;
  }
  if (rows == 0) throw DataError(file + " is empty");
}

std::string json_string_field(const json& row, const char* key, const std::string& file, int64_t line,
                              bool required) {
  auto it = row.find(key);
  if (it == row.end()) {
    if (required) throw DataError(file, line, std::string("missing field \"") + key + "\"");
    return {};
  }
  if (it->is_null()) return {};
  if (!it->is_string())
    throw DataError(file, line, std::string("field \"") + key + "\" must be a string, got " + it->type_name());
  return it->get<std::string>();
}

std::string json_id_field(const json& row, const char* key, const std::string& file, int64_t line) {
  auto it = row.find(key);
  if (it == row.end()) throw DataError(file, line, std::string("missing field \"") + key + "\"");
  std::string id;
  if (it->is_string()) id = it->get<std::string>();
  else if (it->is_number_unsigned()) id = std::to_string(it->get<uint64_t>());
  else if (it->is_number_integer()) id = std::to_string(it->get<int64_t>());
  else
    throw DataError(file, line, std::string("field \"") + key + "\" must be a string or an integer, got " +
                                    it->type_name());
  if (id.empty()) throw DataError(file, line, std::string("field \"") + key + "\" is empty");
  return id;
}

}  // namespace ragmig::text
