// Prompts: the texts a model puts before every query and every passage it embeds (e5's "query: " and
// "passage: ", nomic's "search_query: "), as sentence-transformers' prompts. A model trained with them
// retrieves well only with them, so they travel with the model folder (config_sentence_transformers.json)
// and every path that tokenises for a model — training, its recall checks, `ragmig eval`, `ragmig mine`,
// `ragmig serve` — puts them first. The prompt's tokens count toward the token limit, as in
// sentence-transformers, which also prepends the prompt to the text before tokenising.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace ragmig::text {

struct Prompts {
  std::string query;    ///< before each query; empty = none
  std::string passage;  ///< before each passage (document); empty = none
  bool operator==(const Prompts&) const = default;

  const std::string& of(bool queries) const { return queries ? query : passage; }
};

/// `base` with each prompt that is set replacing its own ("" = none; unset = base's): a model folder's prompts
/// under a config's or command line's.
inline Prompts replaced(Prompts base, const std::optional<std::string>& query,
                        const std::optional<std::string>& passage) {
  if (query) base.query = *query;
  if (passage) base.passage = *passage;
  return base;
}

/// The token ids of `prompt` followed by `text`, at most `max_len` of them (Tokenizer::encode): the one
/// place every path that tokenises for a model puts the prompt first.
inline std::vector<int32_t> encode_with_prompt(const Tokenizer& tokenizer, std::string_view prompt,
                                               std::string_view text, int64_t max_len) {
  if (prompt.empty()) return tokenizer.encode(text, max_len);
  std::string prompted;
  prompted.reserve(prompt.size() + text.size());
  prompted.append(prompt).append(text);
  return tokenizer.encode(prompted, max_len);
}

}  // namespace ragmig::text
