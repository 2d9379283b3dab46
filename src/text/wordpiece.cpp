// WordPieceTokenizer: Hugging Face BertTokenizer's BasicTokenizer and WordpieceTokenizer, in one pass over
// the UTF-8 text with no intermediate normalised copy. See unicode.h for where the character facts come from.
#include "text/wordpiece.h"

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/line_reader.h"
#include "text/unicode.h"

namespace ragmig::text {

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, bool lower_case)
    : WordPieceTokenizer(std::move(vocab), TextNormalization{lower_case, lower_case, true}, {}, "vocabulary") {}

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, const TextNormalization& normalization,
                                       const SpecialTokens& special)
    : WordPieceTokenizer(std::move(vocab), normalization, special, "vocabulary") {}

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, const TextNormalization& normalization,
                                       const SpecialTokens& special, const std::string& source)
    : vocab_(std::move(vocab)), norm_(normalization), special_(special) {
  if (vocab_.size() > static_cast<size_t>(INT32_MAX)) throw DataError(source + ": vocabulary too large");
  ids_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) {
    const std::string& token = vocab_[i];
    auto [it, inserted] = ids_.emplace(token, static_cast<int32_t>(i));
    if (!inserted)
      throw DataError(source, static_cast<int64_t>(i) + 1,
                      "duplicate token '" + token + "' (first at line " + std::to_string(it->second + 1) + ")");
    std::string_view body = token;
    if (body.starts_with("##")) body.remove_prefix(2);
    max_token_chars_ = std::max(max_token_chars_, count_code_points(body));
  }
  const auto require = [&](const std::string& name, const char* role) {
    const int32_t id = find(name);
    if (id < 0) throw DataError(source + ": vocabulary has no " + name + " token (the " + role + " token)");
    return id;
  };
  cls_id_ = require(special_.cls, "cls");
  sep_id_ = require(special_.sep, "sep");
  pad_id_ = require(special_.pad, "pad");
  unk_id_ = require(special_.unk, "unk");
  mask_id_ = find(special_.mask);
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& vocab_txt, bool lower_case) {
  LineReader reader(vocab_txt);
  std::vector<std::string> vocab;
  std::string line;
  while (reader.next(line)) vocab.push_back(line);
  if (vocab.empty()) throw DataError(vocab_txt + " is empty");
  return WordPieceTokenizer(std::move(vocab), TextNormalization{lower_case, lower_case, true}, {}, reader.path());
}

void WordPieceTokenizer::save(const std::string& vocab_txt) const {
  std::string bytes;
  for (const std::string& token : vocab_) {
    bytes += token;
    bytes += '\n';
  }
  write_file_atomic(vocab_txt, bytes);
}

int32_t WordPieceTokenizer::find(std::string_view token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

int32_t WordPieceTokenizer::id_of(std::string_view token) const {
  const int32_t id = find(token);
  return id < 0 ? unk_id_ : id;
}

template <typename Emit>
void WordPieceTokenizer::for_each_word(std::string_view text, Emit&& emit) const {
  std::string word;
  bool go_on = true;
  const auto flush = [&] {
    if (!word.empty()) {
      go_on = emit(std::string_view(word));
      word.clear();
    }
  };
  const auto emit_alone = [&](char32_t cp) {
    flush();
    if (!go_on) return;
    append_utf8(word, cp);
    flush();
  };
  char32_t parts[3];
  size_t pos = 0;
  while (pos < text.size() && go_on) {
    const char32_t cp = decode_utf8(text, pos);
    if (cp == 0 || cp == kReplacementChar) continue;
    const CharClass cls = char_class(cp);
    if (cls == CharClass::kControl) continue;
    if (cls == CharClass::kWhitespace) {
      flush();
      continue;
    }
    if (cls == CharClass::kCjk && norm_.split_cjk) {
      // Lower-casing never changes an ideograph, but NFD maps the compatibility ones to unified ones.
      emit_alone(norm_.strip_accents && strip_accents(cp, parts) == 1 ? parts[0] : cp);
      continue;
    }
    // Lower, then NFD without marks; the pieces may themselves be punctuation (U+037E -> ';').
    const char32_t c = norm_.lower_case ? to_lower(cp) : cp;
    int n = 1;
    if (norm_.strip_accents) n = strip_accents(c, parts);
    else parts[0] = c;
    for (int i = 0; i < n && go_on; ++i) {
      if (char_class(parts[i]) == CharClass::kPunct) emit_alone(parts[i]);
      else append_utf8(word, parts[i]);
    }
  }
  if (go_on) flush();
}

std::vector<std::string> WordPieceTokenizer::basic_tokenize(std::string_view text) const {
  std::vector<std::string> words;
  for_each_word(text, [&](std::string_view w) {
    words.emplace_back(w);
    return true;
  });
  return words;
}

void WordPieceTokenizer::word_piece_ids(std::string_view word, std::vector<int32_t>& out) const {
  // Code point boundaries, so that the longest-match search moves one character at a time.
  std::vector<size_t> bounds;
  bounds.reserve(word.size() + 1);
  for (size_t pos = 0; pos < word.size();) {
    bounds.push_back(pos);
    decode_utf8(word, pos);
  }
  bounds.push_back(word.size());
  const size_t n_chars = bounds.size() - 1;
  if (n_chars > kMaxInputCharsPerWord) {
    out.push_back(unk_id_);
    return;
  }
  const size_t first_out = out.size();
  std::string key;
  size_t start = 0;
  while (start < n_chars) {
    int32_t found = -1;
    size_t end = std::min(n_chars, start + max_token_chars_);
    for (; end > start; --end) {
      std::string_view sub = word.substr(bounds[start], bounds[end] - bounds[start]);
      if (start == 0) {
        found = find(sub);
      } else {
        key.assign("##");
        key.append(sub);
        found = find(key);
      }
      if (found >= 0) break;
    }
    if (found < 0) {
      out.resize(first_out);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(found);
    start = end;
  }
}

std::vector<int32_t> WordPieceTokenizer::encode_pieces(std::string_view text, int64_t max_pieces) const {
  std::vector<int32_t> ids;
  const size_t limit = max_pieces < 0 ? SIZE_MAX : static_cast<size_t>(max_pieces);
  if (limit == 0) return ids;
  for_each_word(text, [&](std::string_view w) {
    word_piece_ids(w, ids);
    return ids.size() < limit;
  });
  if (ids.size() > limit) ids.resize(limit);
  return ids;
}

std::vector<std::string> WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> pieces;
  for (int32_t id : encode_pieces(text)) pieces.push_back(vocab_[static_cast<size_t>(id)]);
  return pieces;
}

std::vector<int32_t> WordPieceTokenizer::encode(std::string_view text, int64_t max_len) const {
  if (max_len < 2) throw ConfigError("max_len must be at least 2 (room for [CLS] and [SEP]), got " +
                                     std::to_string(max_len));
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(std::min<int64_t>(max_len, 512)));
  ids.push_back(cls_id_);
  std::vector<int32_t> pieces = encode_pieces(text, max_len - 2);
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  ids.push_back(sep_id_);
  return ids;
}

}  // namespace ragmig::text
