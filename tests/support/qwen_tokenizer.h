// A byte-level vocabulary framed as Qwen3-Embedding's (model and train tests): the 256 byte characters, then
// <|endoftext|>; split by Qwen2's pattern, $A <|endoftext|>, which also stands for pad and unk (Qwen names none).
#pragma once

#include <cstdint>

#include "text/byte_bpe.h"
#include "text/tokenizer.h"
#include "text/unicode.h"

namespace ragmig::testing {

inline text::TokenizerSpec qwen_style_tokenizer() {
  text::TokenizerSpec t;
  t.kind = text::TokenizerKind::kByteBpe;
  t.bpe_split = text::BpeSplit::kQwen2;
  t.cls_first = false;
  t.special = {"<|endoftext|>", "<|endoftext|>", "<|endoftext|>", "<|endoftext|>", "<mask>"};
  for (int b = 0; b < 256; ++b) {
    t.vocab.emplace_back();
    text::append_utf8(t.vocab.back(), text::ByteBpeTokenizer::byte_char(static_cast<uint8_t>(b)));
  }
  t.vocab.push_back("<|endoftext|>");
  return t;
}

}  // namespace ragmig::testing
