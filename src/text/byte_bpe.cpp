// ByteBpeTokenizer: GPT-2's split pattern by hand (no regex engine), then BPE merges with a heap, so that a
// piece of n bytes costs O(n log n) however long it is.
#include "text/byte_bpe.h"


#include "core/error.h"
#include "text/nfc.h"
#include "text/unicode.h"

namespace ragmig::text {
namespace {

bool printable(uint8_t b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174; }

// The code points of `text` and their byte offsets, with the text's size after the last.
void decode(std::string_view text, std::vector<char32_t>& cps, std::vector<size_t>& at) {
  cps.reserve(text.size());
  at.reserve(text.size() + 1);
  for (size_t pos = 0; pos < text.size();) {
    at.push_back(pos);
    cps.push_back(decode_utf8(text, pos));
  }
  at.push_back(text.size());
}

bool is_contraction_letter(char32_t c) { return c == 's' || c == 't' || c == 'm' || c == 'd'; }

// Calls piece(first, last) with the byte range of each match of GPT-2's pattern, in order, until it returns
// false. `cps` are the text's code points and `at` their byte offsets (at.back() = the text's size).
template <typename Piece>
void split_gpt2(const std::vector<char32_t>& cps, const std::vector<size_t>& at, Piece&& piece) {
  const size_t n = cps.size();
  const auto cls = [&](size_t k) { return split_class(cps[k]); };
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    if (cps[i] == '\'' && i + 1 < n) {  // 's 't 're 've 'm 'll 'd
      const char32_t a = cps[i + 1], b = i + 2 < n ? cps[i + 2] : 0;
      if (is_contraction_letter(a)) j = i + 2;
      else if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) j = i + 3;
    }
    if (j == i) {
      const size_t k = cps[i] == ' ' && i + 1 < n && cls(i + 1) != SplitClass::kSpace ? i + 1 : i;
      const SplitClass c = cls(k);
      if (c != SplitClass::kSpace) {  // ' ?\p{L}+', ' ?\p{N}+' or ' ?[^\s\p{L}\p{N}]+'
        j = k;
        while (j < n && cls(j) == c) ++j;
      } else {  // '\s+(?!\S)': a run of spaces less its last before a non-space; else '\s+'
        while (j < n && cls(j) == SplitClass::kSpace) ++j;
        if (j < n && j - i > 1) --j;
      }
    }
    if (!piece(at[i], at[j])) return;
    i = j;
  }
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at i: the end of the match, or i. Case-insensitive as Oniguruma folds: the long s
// (U+017F) is an s.
size_t contraction_end(const std::vector<char32_t>& cps, size_t i) {
  const size_t n = cps.size();
  if (cps[i] != '\'' || i + 1 >= n) return i;
  const auto lower = [](char32_t c) { return c == 0x17F ? U's' : c >= 'A' && c <= 'Z' ? c + 32 : c; };
  const char32_t a = lower(cps[i + 1]), b = i + 2 < n ? lower(cps[i + 2]) : 0;
  if (is_contraction_letter(a)) return i + 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  return i;
}

bool is_line_break(char32_t c) {
  return c == '\r' || c == '\n';
}

// As split_gpt2, by Qwen2's pattern (max_digits 1) or Llama 3's (3):
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|
//   \s*[\r\n]+|\s+(?!\S)|\s+
// the first alternative that matches at a position taking the match, as the tokenizers library's regex engine does.
template <typename Piece>
void split_qwen2(const std::vector<char32_t>& cps, const std::vector<size_t>& at, size_t max_digits, Piece&& piece) {
  const size_t n = cps.size();
  const auto cls = [&](size_t k) { return k < n ? split_class(cps[k]) : SplitClass::kOther; };
  const auto run_end = [&](size_t k, SplitClass c) {
    while (k < n && cls(k) == c) ++k;
    return k;
  };
  size_t i = 0;
  while (i < n) {
    size_t j = contraction_end(cps, i);
    const SplitClass c = cls(i);
    if (j == i && c == SplitClass::kLetter) {  // \p{L}+
      j = run_end(i, SplitClass::kLetter);
    } else if (j == i && c != SplitClass::kNumber && !is_line_break(cps[i]) && i + 1 < n &&
               cls(i + 1) == SplitClass::kLetter) {  // [^\r\n\p{L}\p{N}]\p{L}+
      j = run_end(i + 1, SplitClass::kLetter);
    } else if (j == i && c == SplitClass::kNumber) {  // \p{N}{1,max_digits}
      while (j < n && j - i < max_digits && cls(j) == SplitClass::kNumber) ++j;
    } else if (j == i) {
      const size_t k = cps[i] == ' ' && i + 1 < n && cls(i + 1) == SplitClass::kOther ? i + 1 : i;
      if (cls(k) == SplitClass::kOther) {  //  ?[^\s\p{L}\p{N}]+[\r\n]*
        j = run_end(k, SplitClass::kOther);
        while (j < n && is_line_break(cps[j])) ++j;
      } else {  // whitespace at i
        const size_t end = run_end(i, SplitClass::kSpace);
        size_t last_break = end;
        for (size_t k2 = i; k2 < end; ++k2)
          if (is_line_break(cps[k2])) last_break = k2;
        if (last_break < end)
          j = last_break + 1;  // \s*[\r\n]+
        else if (end < n && end - i > 1)
          j = end - 1;  // \s+(?!\S): all but the last before a non-space
        else
          j = end;  // \s+
      }
    }
    if (!piece(at[i], at[j])) return;
    i = j;
  }
}

// Calls piece with each match of `split`'s pattern (split_gpt2, split_qwen2).
template <typename Piece>
void split_by(BpeSplit split, const std::vector<char32_t>& cps, const std::vector<size_t>& at, Piece&& piece) {
  if (split == BpeSplit::kGpt2) return split_gpt2(cps, at, piece);
  split_qwen2(cps, at, split == BpeSplit::kLlama3 ? 3 : 1, piece);
}

}  // namespace

char32_t ByteBpeTokenizer::byte_char(uint8_t byte) {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) t[b] = printable(static_cast<uint8_t>(b)) ? static_cast<char32_t>(b) : next++;
    return t;
  }();
  return table[byte];
}

ByteBpeTokenizer::ByteBpeTokenizer(const TokenizerSpec& spec, const std::string& source)
    : Tokenizer(spec, source), merges_(spec.merges, [this](std::string_view token) { return find(token); }, source) {
  for (const NormalizerStep& step : spec.normalizer) {
    if (step.kind != NormalizerStep::Kind::kNfc)
      throw DataError(source + ": byte-level BPE normalises with NFC only (or not at all)");
    nfc_ = true;
  }
  std::string ch;
  for (int b = 0; b < 256; ++b) {
    ch.clear();
    append_utf8(ch, byte_char(static_cast<uint8_t>(b)));
    const int32_t id = find(ch);
    byte_ids_[b] = id < 0 ? unk_id() : id;
  }
}

std::vector<std::string_view> ByteBpeTokenizer::pre_tokenize(std::string_view text, BpeSplit split) {
  std::vector<char32_t> cps;
  std::vector<size_t> at;
  decode(text, cps, at);
  std::vector<std::string_view> pieces;
  split_by(split, cps, at, [&](size_t first, size_t last) {
    pieces.push_back(text.substr(first, last - first));
    return true;
  });
  return pieces;
}

void ByteBpeTokenizer::encode_text(std::string_view text, bool /*at_start*/, size_t limit,
                                   std::vector<int32_t>& ids) const {
  std::string normalized;
  if (nfc_) {
    normalized = nfc(text);
    text = normalized;
  }
  std::string prefixed;
  if (spec().add_prefix_space && !text.empty() && !text.starts_with(' ')) {
    prefixed.reserve(text.size() + 1);
    prefixed.append(" ").append(text);
    text = prefixed;
  }
  std::vector<char32_t> cps;
  std::vector<size_t> at;
  decode(text, cps, at);
  std::vector<int32_t> symbols;
  split_by(spec().bpe_split, cps, at, [&](size_t first, size_t last) {
    symbols.clear();
    for (size_t b = first; b < last; ++b) symbols.push_back(byte_ids_[static_cast<uint8_t>(text[b])]);
    merges_.apply(symbols);
    ids.insert(ids.end(), symbols.begin(), symbols.end());
    return ids.size() < limit;
  });
}

}  // namespace ragmig::text
