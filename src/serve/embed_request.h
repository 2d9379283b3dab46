// The two request schemas that embedding clients speak, parsed into one EmbedRequest, and their responses:
// OpenAI's POST /v1/embeddings (the `openai` client, LangChain, LlamaIndex) and text-embeddings-inference's
// POST /embed. Pure and torch-free: bytes in, a request or a RequestError naming the field out (fuzzed).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ragmig::serve {

enum class Mode { Query, Passage };

struct EmbedRequest {
  std::vector<std::string> texts;
  std::string model;                 ///< "" = the base model
  Mode mode = Mode::Passage;         ///< OpenAI: input_type (query | passage | document); TEI: "query" prompt
  bool normalize = true;             ///< TEI's normalize (OpenAI always normalises when the model does)
  std::optional<bool> truncate;      ///< TEI's truncate; unset = the server's --oversize policy
  bool base64 = false;               ///< OpenAI's encoding_format "base64" (little-endian float32)
  std::optional<int64_t> dimensions; ///< OpenAI's dimensions
};

/// A client error: the HTTP status, the message, and the JSON field it is about ("" = the body).
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, const std::string& message, std::string field = "")
      : std::runtime_error(message), status_(status), field_(std::move(field)) {}
  int status() const { return status_; }
  const std::string& field() const { return field_; }

 private:
  int status_;
  std::string field_;
};

/// Limits applied while parsing.
struct RequestLimits {
  size_t max_inputs = 2048;     ///< texts per request (OpenAI's own limit)
  size_t max_text_bytes = 1 << 20;
};

/// Parses OpenAI's body: {"input": string | [string], "model": string, "encoding_format": "float" | "base64",
/// "dimensions": int, "input_type": "query" | "passage" | "document", "user": ...}. Throws RequestError (400)
/// naming the field; token-id inputs (lists of integers) are refused: ragmig tokenises itself.
EmbedRequest parse_openai_request(const std::string& body, const RequestLimits& limits = {});
/// Parses TEI's body: {"inputs": string | [string], "normalize": bool, "truncate": bool, "prompt_name":
/// "query" | "passage" | null, "model": string (ragmig's extension: an adapter)}. Throws RequestError (422, as
/// TEI answers validation errors) naming the field.
EmbedRequest parse_tei_request(const std::string& body, const RequestLimits& limits = {});

/// OpenAI's response: {"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model",
/// "usage": {"prompt_tokens", "total_tokens"}}; rows of `dim` floats, base64 of little-endian float32 if asked.
std::string openai_response(const std::vector<float>& rows, int64_t dim, const std::string& model, bool base64,
                            int64_t prompt_tokens);
/// TEI's response: a JSON array of arrays.
std::string tei_response(const std::vector<float>& rows, int64_t dim);

/// OpenAI's error body: {"error": {"message", "type", "param", "code"}}.
std::string openai_error(const std::string& message, const std::string& type, const std::string& param,
                         const std::string& code = "");
/// TEI's error body: {"error", "error_type"}.
std::string tei_error(const std::string& message, const std::string& error_type);

}  // namespace ragmig::serve
