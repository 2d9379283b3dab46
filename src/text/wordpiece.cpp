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
    : Tokenizer(word_piece_spec(std::move(vocab), normalization, special), source) {
  for (const std::string& token : this->vocab()) {
    std::string_view body = token;
    if (body.starts_with("##")) body.remove_prefix(2);
    max_token_chars_ = std::max(max_token_chars_, count_code_points(body));
  }
}

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& vocab_txt, bool lower_case) {
  LineReader reader(vocab_txt);
  std::vector<std::string> vocab;
  std::string line;
  while (reader.next(line)) vocab.push_back(line);
  if (vocab.empty()) throw DataError(vocab_txt + " is empty");
  return WordPieceTokenizer(std::move(vocab), TextNormalization{lower_case, lower_case, true}, {}, reader.path());
}

void write_vocab_txt(const std::string& path, const std::vector<std::string>& vocab) {
  std::string bytes;
  for (const std::string& token : vocab) {
    bytes += token;
    bytes += '\n';
  }
  write_file_atomic(path, bytes);
}

void WordPieceTokenizer::save(const std::string& vocab_txt) const { write_vocab_txt(vocab_txt, vocab()); }

template <typename Emit>
void WordPieceTokenizer::for_each_word(std::string_view text, Emit&& emit) const {
  const TextNormalization& norm = normalization();
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
    if (cls == CharClass::kCjk && norm.split_cjk) {
      // Lower-casing never changes an ideograph, but NFD maps the compatibility ones to unified ones.
      emit_alone(norm.strip_accents && strip_accents(cp, parts) == 1 ? parts[0] : cp);
      continue;
    }
    // Lower, then NFD without marks; the pieces may themselves be punctuation (U+037E -> ';').
    const char32_t c = norm.lower_case ? to_lower(cp) : cp;
    int n = 1;
    if (norm.strip_accents) n = strip_accents(c, parts);
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
    out.push_back(unk_id());
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
      out.push_back(unk_id());
      return;
    }
    out.push_back(found);
    start = end;
  }
}

void WordPieceTokenizer::encode_text(std::string_view text, bool /*at_start*/, size_t limit,
                                     std::vector<int32_t>& ids) const {
  for_each_word(text, [&](std::string_view w) {
    word_piece_ids(w, ids);
    return ids.size() < limit;
  });
}

}  // namespace ragmig::text
