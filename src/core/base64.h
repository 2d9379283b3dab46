// Base64 (RFC 4648's standard alphabet, padded): OpenAI's base64 embeddings, SentencePiece charsmaps in
// tokenizer.json.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ragmig {

/// Base64 of bytes, padded with '='.
std::string base64_encode(const void* data, size_t size);

/// The bytes of padded base64 text; nullopt for a character outside the alphabet, a length that is not a
/// multiple of 4 or padding anywhere but at the end.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace ragmig
