// A SentencePiece Unigram tokenizer (XLM-R's) as tokenizer.json holds it, both ways: the model's [piece, score]
// vocabulary, its normaliser (Precompiled, Replace, Strip, or a Sequence of them) and its pre-tokenizer
// (Metaspace, optionally after WhitespaceSplit), plus the post-processor, decoder and added tokens transformers
// reads. Torch-free; st_folder.cpp reads and writes the file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace ragmig::model {

/// The Unigram tokenizer of a tokenizer.json whose model type is "Unigram": vocabulary and scores (added tokens
/// with the ids that follow the model's vocabulary appended, scored 0), normaliser and pre-tokenizer; RoBERTa's
/// special-token names (XLM-R's). Throws DataError naming `file` and the key for what ragmig does not run (another
/// normaliser or pre-tokenizer type, a Replace regex other than " {2,}", byte fallback) or a value of the wrong
/// shape.
text::TokenizerSpec unigram_from_tokenizer_json(const nlohmann::json& tj, const std::string& file);

/// tokenizer.json's "normalizer" as steps (none for null or absent): Precompiled, Replace (a string, or the regex
/// " {2,}"), Strip, NFC and Prepend, alone or in a Sequence. Throws DataError naming `file` and the key for any other.
std::vector<text::NormalizerStep> normalizer_from_json(const nlohmann::json& tj, const std::string& file);
/// The "normalizer" of those steps: null for none, else a Sequence of them.
nlohmann::json normalizer_json(const std::vector<text::NormalizerStep>& steps);

/// A Metaspace pre-tokenizer's object (replacement, split, prepend_scheme or the older add_prefix_space); `where`
/// names it in errors. Throws DataError naming `file` and the key for a value of the wrong shape.
text::MetaspaceSplit metaspace_from_json(const nlohmann::json& metaspace, const std::string& file,
                                         const std::string& where);
/// The Metaspace object of `m` (without its whitespace_split), as tokenizers writes it.
nlohmann::json metaspace_json(const text::MetaspaceSplit& m);

/// The tokenizer.json of a Unigram spec, as transformers 5 writes XLM-R's: <s> $A </s>, added special tokens.
nlohmann::json unigram_tokenizer_json(const text::TokenizerSpec& spec);

}  // namespace ragmig::model
