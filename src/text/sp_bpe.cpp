#include "text/sp_bpe.h"

#include <cstdio>

#include "core/error.h"
#include "core/strings.h"
#include "text/nfc.h"
#include "text/unicode.h"

namespace ragmig::text {
std::string SentencePieceBpeTokenizer::byte_token(uint8_t byte) {
  char name[8];
  std::snprintf(name, sizeof name, "<0x%02X>", byte);
  return name;
}

SentencePieceBpeTokenizer::SentencePieceBpeTokenizer(const TokenizerSpec& spec, const std::string& source)
    : Tokenizer(spec, source), merges_(spec.merges, [this](std::string_view token) { return find(token); }, source) {
  for (const NormalizerStep& step : spec.normalizer)
    if (step.kind != NormalizerStep::Kind::kReplace && step.kind != NormalizerStep::Kind::kNfc &&
        step.kind != NormalizerStep::Kind::kPrepend)
      throw DataError(source + ": SentencePiece BPE normalises with Replace, Prepend and NFC steps only");
  if (spec.metaspace && (spec.pre_tokenizer.split || spec.pre_tokenizer.whitespace_split))
    throw DataError(source + ": SentencePiece BPE takes a Metaspace that does not split (split false)");
  for (int c = 0; c < 128; ++c) ascii_ids_[static_cast<size_t>(c)] = find(std::string(1, static_cast<char>(c)));
  for (int b = 0; b < 256; ++b) {
    const std::string name = byte_token(static_cast<uint8_t>(b));
    byte_ids_[static_cast<size_t>(b)] = find(name);
    if (byte_ids_[static_cast<size_t>(b)] < 0)
      throw DataError(source + ": byte token \"" + name +
                      "\" is not in the vocabulary (SentencePiece BPE falls back to the 256 byte tokens <0x00> ... "
                      "<0xFF>)");
  }
}

void SentencePieceBpeTokenizer::encode_text(std::string_view text, bool at_start, size_t limit,
                                            std::vector<int32_t>& ids) const {
  if (ids.size() >= limit || text.empty()) return;
  std::string s(text);
  for (const NormalizerStep& step : spec().normalizer) {
    if (step.kind == NormalizerStep::Kind::kReplace)
      replace_all(s, step.text, step.content);
    else if (step.kind == NormalizerStep::Kind::kNfc)
      s = nfc(s);
    else if (!s.empty())  // kPrepend, as the tokenizers library: not before an empty text
      s.insert(0, step.content);
  }
  if (spec().metaspace) {  // as the tokenizers library's Metaspace with split false
    const MetaspaceSplit& m = spec().pre_tokenizer;
    replace_all(s, " ", m.replacement);
    const bool prepend =
        m.prepend == MetaspaceSplit::Prepend::kAlways || (m.prepend == MetaspaceSplit::Prepend::kFirst && at_start);
    if (prepend && !s.starts_with(m.replacement)) s.insert(0, m.replacement);
  }
  std::vector<int32_t> symbols;
  symbols.reserve(s.size());
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const auto lead = static_cast<uint8_t>(s[pos]);
    if (lead < 128 && ascii_ids_[lead] >= 0) {  // most characters: no hashing
      symbols.push_back(ascii_ids_[lead]);
      ++pos;
      continue;
    }
    decode_utf8(s, pos);  // one character, or one malformed byte
    if (const int32_t id = find(std::string_view(s).substr(start, pos - start)); id >= 0) {
      symbols.push_back(id);
      continue;
    }
    for (size_t b = start; b < pos; ++b) symbols.push_back(byte_ids_[static_cast<uint8_t>(s[b])]);
  }
  merges_.apply(symbols);
  ids.insert(ids.end(), symbols.begin(), symbols.end());
}

}  // namespace ragmig::text
