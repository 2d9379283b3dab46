// Byte-level BPE vocabularies the model, serve and fuzz tests build: the 256 byte characters with RoBERTa's
// special tokens before them, or with <|endoftext|> after them framed as Qwen3-Embedding's; and SentencePiece BPE's
// as Gemma's (its special tokens, then the 256 byte tokens). No merges: a test appends the tokens and merges it
// needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "text/byte_bpe.h"
#include "text/sp_bpe.h"
#include "text/tokenizer.h"
#include "text/unicode.h"

namespace ragmig::testing {

/// GPT-2's character of every byte, as UTF-8, appended in byte order.
inline void append_byte_chars(std::vector<std::string>& vocab) {
  for (int b = 0; b < 256; ++b) {
    vocab.emplace_back();
    text::append_utf8(vocab.back(), text::ByteBpeTokenizer::byte_char(static_cast<uint8_t>(b)));
  }
}

/// RoBERTa's special tokens (ids 0-4), then the byte characters; framed <s> $A </s>.
inline text::TokenizerSpec roberta_style_tokenizer() {
  text::TokenizerSpec t;
  t.kind = text::TokenizerKind::kByteBpe;
  t.special = text::roberta_special_tokens();
  t.vocab = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
  append_byte_chars(t.vocab);
  return t;
}

/// The byte characters, then <|endoftext|>; split by Qwen2's pattern, $A <|endoftext|>, which also stands for pad
/// and unk (Qwen names none).
inline text::TokenizerSpec qwen_style_tokenizer() {
  text::TokenizerSpec t;
  t.kind = text::TokenizerKind::kByteBpe;
  t.bpe_split = text::BpeSplit::kQwen2;
  t.cls_first = false;
  t.special = {"<|endoftext|>", "<|endoftext|>", "<|endoftext|>", "<|endoftext|>", "<mask>"};
  append_byte_chars(t.vocab);
  t.vocab.push_back("<|endoftext|>");
  return t;
}

/// Gemma's special tokens (<pad> <eos> <bos> <unk> <mask>, ids 0-4), then the byte tokens <0x00> ... <0xFF>; " "
/// replaced by "▁", framed <bos> $A <eos> (EmbeddingGemma's).
inline text::TokenizerSpec gemma_style_tokenizer() {
  text::TokenizerSpec t;
  t.kind = text::TokenizerKind::kSentencePieceBpe;
  t.special = {"<bos>", "<eos>", "<pad>", "<unk>", "<mask>"};
  t.vocab = {"<pad>", "<eos>", "<bos>", "<unk>", "<mask>"};
  for (int b = 0; b < 256; ++b) t.vocab.push_back(text::SentencePieceBpeTokenizer::byte_token(static_cast<uint8_t>(b)));
  t.normalizer = {{text::NormalizerStep::Kind::kReplace, " ", "\u2581", false, false}};
  return t;
}

/// Llama's and Mistral's layout of it (transformers 5's LlamaTokenizer): <unk> <s> </s>, the 256 byte tokens, a
/// Metaspace with prepend_scheme "first" and no split instead of a normaliser, </s> padding (Llama has no pad token).
inline text::TokenizerSpec llama_style_tokenizer() {
  text::TokenizerSpec t;
  t.kind = text::TokenizerKind::kSentencePieceBpe;
  t.special = {"<s>", "</s>", "</s>", "<unk>", "<mask>"};
  t.vocab = {"<unk>", "<s>", "</s>"};
  for (int b = 0; b < 256; ++b) t.vocab.push_back(text::SentencePieceBpeTokenizer::byte_token(static_cast<uint8_t>(b)));
  t.metaspace = true;
  t.pre_tokenizer.split = false;
  t.pre_tokenizer.prepend = text::MetaspaceSplit::Prepend::kFirst;
  return t;
}

}  // namespace ragmig::testing
