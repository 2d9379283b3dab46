#include "serve/embed_request.h"

#include <fmt/format.h>

#include <cstring>

#include "core/base64.h"

namespace ragmig::serve {
namespace {

using nlohmann::json;

json parse_object(const std::string& body, int status) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) throw RequestError(status, "the body is not valid JSON");
  if (!j.is_object()) throw RequestError(status, fmt::format("the body must be a JSON object, got {}", j.type_name()));
  return j;
}

// A string or a non-empty list of strings, as both schemas take their texts.
std::vector<std::string> read_texts(const json& j, const std::string& field, int status, const RequestLimits& limits) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) throw RequestError(status, "\"" + field + "\" is required", field);
  std::vector<std::string> texts;
  if (it->is_string()) {
    texts.push_back(it->get<std::string>());
  } else if (it->is_array()) {
    if (it->empty()) throw RequestError(status, "\"" + field + "\" must not be empty", field);
    if (it->size() > limits.max_inputs)
      throw RequestError(status, fmt::format("\"{}\" has {} texts, at most {} are allowed per request", field,
                                             it->size(), limits.max_inputs), field);
    for (size_t i = 0; i < it->size(); ++i) {
      const json& t = (*it)[i];
      if (t.is_number_integer() || t.is_array())
        throw RequestError(status, fmt::format("\"{}\"[{}]: token ids are not accepted; send the text", field, i), field);
      if (!t.is_string())
        throw RequestError(status, fmt::format("\"{}\"[{}] must be a string, got {}", field, i, t.type_name()), field);
      texts.push_back(t.get<std::string>());
    }
  } else {
    throw RequestError(status, fmt::format("\"{}\" must be a string or a list of strings, got {}", field, it->type_name()), field);
  }
  for (size_t i = 0; i < texts.size(); ++i)
    if (texts[i].size() > limits.max_text_bytes)
      throw RequestError(413, fmt::format("\"{}\"[{}] has {} bytes, at most {} are allowed", field, i, texts[i].size(),
                                          limits.max_text_bytes), field);
  return texts;
}

std::string optional_string(const json& j, const std::string& field, int status) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) return "";
  if (!it->is_string()) throw RequestError(status, fmt::format("\"{}\" must be a string, got {}", field, it->type_name()), field);
  return it->get<std::string>();
}

std::optional<bool> optional_bool(const json& j, const std::string& field, int status) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) throw RequestError(status, fmt::format("\"{}\" must be true or false, got {}", field, it->dump()), field);
  return it->get<bool>();
}

Mode parse_mode(const std::string& value, const std::string& field, int status) {
  if (value.empty() || value == "passage" || value == "document") return Mode::Passage;
  if (value == "query") return Mode::Query;
  throw RequestError(status, fmt::format("\"{}\" must be query, passage or document, got \"{}\"", field, value), field);
}

std::string rows_json(const std::vector<float>& rows, int64_t dim, int64_t r) {
  std::string out = "[";
  for (int64_t c = 0; c < dim; ++c) out += (c ? "," : "") + fmt::format("{}", rows[static_cast<size_t>(r * dim + c)]);
  return out + "]";
}

}  // namespace

EmbedRequest parse_openai_request(const std::string& body, const RequestLimits& limits) {
  const json j = parse_object(body, 400);
  EmbedRequest r;
  r.texts = read_texts(j, "input", 400, limits);
  r.model = optional_string(j, "model", 400);
  const std::string format = optional_string(j, "encoding_format", 400);
  if (!format.empty() && format != "float" && format != "base64")
    throw RequestError(400, "\"encoding_format\" must be float or base64, got \"" + format + "\"", "encoding_format");
  r.base64 = format == "base64";
  if (const auto it = j.find("dimensions"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1)
      throw RequestError(400, "\"dimensions\" must be a positive integer, got " + it->dump(), "dimensions");
    r.dimensions = it->get<int64_t>();
  }
  r.mode = parse_mode(optional_string(j, "input_type", 400), "input_type", 400);
  return r;
}

EmbedRequest parse_tei_request(const std::string& body, const RequestLimits& limits) {
  const json j = parse_object(body, 422);
  EmbedRequest r;
  r.texts = read_texts(j, "inputs", 422, limits);
  r.model = optional_string(j, "model", 422);
  r.normalize = optional_bool(j, "normalize", 422).value_or(true);
  r.truncate = optional_bool(j, "truncate", 422);
  r.mode = parse_mode(optional_string(j, "prompt_name", 422), "prompt_name", 422);
  return r;
}

std::string openai_response(const std::vector<float>& rows, int64_t dim, const std::string& model, bool base64,
                            int64_t prompt_tokens) {
  const int64_t n = dim > 0 ? static_cast<int64_t>(rows.size()) / dim : 0;
  // Written by hand rather than through json: a float array of a 768-d batch is most of the response's cost.
  std::string out = R"({"object":"list","data":[)";
  for (int64_t r = 0; r < n; ++r) {
    // float32 is little-endian on every machine ragmig builds for (x86-64, aarch64), as OpenAI's base64 is.
    const std::string embedding = base64 ? json(base64_encode(rows.data() + r * dim, static_cast<size_t>(dim) * sizeof(float))).dump()
                                         : rows_json(rows, dim, r);
    out += fmt::format(R"({}{{"object":"embedding","index":{},"embedding":{}}})", r ? "," : "", r, embedding);
  }
  out += fmt::format(R"(],"model":{},"usage":{{"prompt_tokens":{},"total_tokens":{}}}}})", json(model).dump(), prompt_tokens,
                     prompt_tokens);
  return out;
}

std::string tei_response(const std::vector<float>& rows, int64_t dim) {
  const int64_t n = dim > 0 ? static_cast<int64_t>(rows.size()) / dim : 0;
  std::string out = "[";
  for (int64_t r = 0; r < n; ++r) out += (r ? "," : "") + rows_json(rows, dim, r);
  return out + "]";
}

std::string openai_error(const std::string& message, const std::string& type, const std::string& param,
                         const std::string& code) {
  return json{{"error", {{"message", message}, {"type", type}, {"param", param.empty() ? json(nullptr) : json(param)},
                         {"code", code.empty() ? json(nullptr) : json(code)}}}}
      .dump();
}

std::string tei_error(const std::string& message, const std::string& error_type) {
  return json{{"error", message}, {"error_type", error_type}}.dump();
}

}  // namespace ragmig::serve
