// What the tokenizer.json files ragmig writes share (the special tokens as added tokens, the [CLS] $A [SEP]
// post-processor), and the byte-level BPE one (ModernBERT's layout). Torch-free; unigram_json.cpp writes the
// Unigram file with these, st_folder.cpp reads both kinds.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "text/tokenizer.h"

namespace ragmig::model {

/// The Split pattern a tokenizer.json gives byte-level BPE split by Qwen2's or Llama 3's pattern (a Split before a
/// ByteLevel without use_regex), as the tokenizers library spells it; "" for GPT-2's (the ByteLevel's own).
std::string split_pattern(text::BpeSplit split);

/// The id of `token` in spec's vocabulary, or -1.
int64_t token_id(const text::TokenizerSpec& spec, const std::string& token);

/// tokenizer.json's added_tokens, by id, with their lstrip / rstrip: each special token the vocabulary has and the
/// spec's added_tokens (special, normalized false), and its normalized_added_tokens (normalized, not special), so
/// that the tokenizers library searches for them as ragmig does.
nlohmann::json special_added_tokens(const text::TokenizerSpec& spec);

/// A TemplateProcessing post-processor of cls $A sep, without cls where not cls_first and without sep where not
/// sep_last; pairs as cls $A sep sep $B sep (RoBERTa's and XLM-R's, `double_sep`) or cls $A sep $B sep (BERT's and
/// ModernBERT's), the same tokens left out.
nlohmann::json template_post_processor(const text::TokenizerSpec& spec, bool double_sep);

/// The tokenizer.json of a byte-level BPE spec as the tokenizers library writes ModernBERT's: NFC or no
/// normaliser (the spec's), a ByteLevel pre-tokenizer (spec's add_prefix_space; after a Split by the spec's
/// pattern where it is not GPT-2's), cls $A sep (the spec's framing), the BPE model with
/// its merges as "left right".
nlohmann::json byte_bpe_tokenizer_json(const text::TokenizerSpec& spec);

/// The tokenizer.json of a SentencePiece BPE spec as transformers 5 writes GemmaTokenizer's and LlamaTokenizer's: the
/// spec's normaliser (Gemma's Replace " " by "▁", a legacy Prepend), a Split at " " after a Replace of " " (which then
/// splits nothing) or the spec's Metaspace, cls $A sep (or $A sep), the BPE model with byte fallback, fused unknowns
/// and its merges as [left, right].
nlohmann::json sentencepiece_bpe_tokenizer_json(const text::TokenizerSpec& spec);

/// The tokenizer.json of a WordPiece spec as transformers writes BertTokenizerFast's: BertNormalizer with the
/// spec's normalisation, BertPreTokenizer, cls $A sep, the WordPiece model ("##" continuations). For families
/// whose transformers tokenizer is tokenizer.json alone (a ModernBERT ragmig trains from scratch).
nlohmann::json word_piece_tokenizer_json(const text::TokenizerSpec& spec);

}  // namespace ragmig::model
