// Unicode Normalization Form C (UAX #15): canonical decomposition, canonical ordering, canonical composition,
// from the tables gen_unicode_tables.py takes from Python's unicodedata. The tokenizers library's NFC
// normaliser (GPT-NeoX's, OLMo's and ModernBERT's tokenizer.json have one) runs this before byte-level BPE.
#pragma once

#include <string>
#include <string_view>

namespace ragmig::text {

/// The NFC form of UTF-8 `text`. Malformed bytes are kept as they are and break the text into parts normalised
/// apart. Text without a code point from U+0300 on (ASCII, Latin-1) comes back unchanged without being decoded.
std::string nfc(std::string_view text);

/// The canonical combining class of `cp` (0 for starters).
int canonical_combining_class(char32_t cp);

}  // namespace ragmig::text
