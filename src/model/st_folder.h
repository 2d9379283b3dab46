// The files beside config.json and model.safetensors that Hugging Face tokenizers and sentence-transformers
// read: vocab.txt (WordPiece) or vocab.json + merges.txt (byte-level BPE), tokenizer_config.json,
// special_tokens_map.json, tokenizer.json, sentence_bert_config.json, modules.json, 1_Pooling/config.json,
// 2_Dense/config.json, 2_Normalize/ (3_Normalize/ after a Dense module). Torch-free: what they say about the
// tokenizer and the embedding, read from and written to a folder (a Dense module's weights are model_folder's).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/dense_config.h"
#include "text/prompts.h"
#include "text/tokenizer.h"

namespace ragmig::model {

/// The JSON of a model folder's file. Throws IoError if unreadable, DataError naming it if not JSON.
nlohmann::json read_json_file(const std::string& path);

/// vocab.txt: one token per line (a final line break is optional). Throws IoError if unreadable.
std::vector<std::string> read_vocab_file(const std::string& path);

/// What a folder says about its tokenizer.
struct FolderTokenizer {
  text::TokenizerSpec spec;  ///< the vocabulary, special tokens' names (MPNet's <s>, </s>, ...) and settings
  int64_t max_length = 0;    ///< longest input in tokens, [CLS] and [SEP] included; 0 = not said
  std::string vocab_file;    ///< the file the vocabulary came from (for messages)
};

/// Reads the tokenizer of a folder. Byte-level BPE (RoBERTa's) from tokenizer.json's BPE model (with a
/// ByteLevel pre-tokenizer and no normaliser), else from vocab.json + merges.txt; add_prefix_space from
/// tokenizer_config.json, else tokenizer.json's pre-tokenizer, else false. A BPE model with byte_fallback is
/// SentencePiece BPE (Gemma's: Replace " " by "▁", no pre-tokenizer, every <0xXX> byte token), framed by
/// tokenizer_config.json's add_bos_token / add_eos_token where it has them, else by the post-processor; bos and
/// eos (its bos_token, eos_token) become cls and sep. Otherwise WordPiece: the vocabulary
/// from vocab.txt, else from tokenizer.json's WordPiece model (as transformers 5 saves it); the normalisation
/// from tokenizer.json's BertNormalizer, else tokenizer_config.json (do_lower_case, strip_accents,
/// tokenize_chinese_chars), else uncased BERT's. Then for both: the
/// length from sentence_bert_config.json's max_seq_length, else tokenizer_config.json's model_max_length
/// (ignored when it is transformers' "no limit" sentinel); the special tokens' names from tokenizer_config.json,
/// else special_tokens_map.json (cls_token, sep_token, pad_token, unk_token, mask_token: a string or an
/// AddedToken's {"content": ...}), else BERT's (RoBERTa's for BPE). sentence_bert_config.json's do_lower_case =
/// true lower-cases a WordPiece tokenizer too. Throws IoError when there is no vocabulary, DataError naming the
/// file and key (or merges.txt's line) for a value of the wrong type, a tokenizer.json model other than WordPiece
/// or BPE, a BPE tokenizer ragmig does not run (a normaliser other than NFC, no ByteLevel pre-tokenizer, subword
/// affixes, dropout; with byte fallback: a normaliser step other than Replace and NFC, a pre-tokenizer, a byte token
/// missing, a framing without eos) or ids that leave gaps.
FolderTokenizer read_folder_tokenizer(const std::string& dir);

/// What modules.json and its module folders say about the embedding (nullopt: no modules.json).
struct SentenceTransformerLayout {
  std::string transformer_path;  ///< the folder of the BERT files, relative ("" = the folder itself)
  std::string pooling;           ///< "mean" | "cls" | "max" | "mean_sqrt_len_tokens"
  std::vector<DenseConfig> dense;        ///< the Dense modules after pooling, in order
  std::vector<std::string> dense_paths;  ///< their folders, relative (each's config.json and model.safetensors)
  bool normalize = false;
};

/// Reads modules.json (old and new sentence-transformers type names), the Pooling module's config.json
/// (the pooling_mode_* flags of sentence-transformers 2-5 or pooling_mode of 6) and a Dense module's
/// config.json. Throws DataError naming the file for a module ragmig does not run (a
/// non-Transformer encoder, ...), modules out of the order Transformer, Pooling, Dense, Normalize, a pooling
/// other than mean, CLS, max or mean_sqrt_len_tokens (one of them alone), include_prompt = false (pooling that
/// leaves the prompt's tokens out) or a Dense config dense_config_from_json refuses.
std::optional<SentenceTransformerLayout> read_sentence_transformer_layout(const std::string& dir);

/// A PEFT (LoRA) adapter folder's config file (lora.h reads and writes it; torch-free code tells such a folder by it).
inline constexpr const char* kAdapterConfigFile = "adapter_config.json";

/// Throws InputFileError unless `dir` is a folder model_folder.h's load_model_folder could start on: one with
/// adapter_config.json (a LoRA adapter, lora.h) or config.json (at the top, or in a sentence-transformers folder's
/// Transformer module). Reads no weights: commands check a --model or model.init with it before their data.
void check_model_folder(const std::string& dir);

/// Where a model folder keeps its BERT files (config.json, vocabulary, weights): its Transformer module's folder
/// by `layout` (read_sentence_transformer_layout's), else the folder itself.
std::string transformer_folder(const std::string& dir, const std::optional<SentenceTransformerLayout>& layout);

/// The prompts of config_sentence_transformers.json's "prompts" (text/prompts.h): the query prompt is "query",
/// the passage prompt the first non-empty one of "document", "passage" and "corpus" (sentence-transformers'
/// encode_document looks for those names in that order, but takes the first present even when it is empty,
/// which drops an e5-style {"query", "passage"} pair's passage prompt). No file, no "prompts" or null values:
/// none. Throws DataError naming the file and key for a value that is not a string or null.
text::Prompts read_prompts(const std::string& dir);

/// config_sentence_transformers.json's "truncate_dim": the size sentence-transformers' encode() cuts embeddings to
/// (embedding_sizes.h). No file, no key or null: 0. Throws DataError naming the file and key for a value that is
/// not a positive integer or null.
int64_t read_truncate_dim(const std::string& dir);

/// Writes config_sentence_transformers.json with `prompts` alone (an adapter folder's own prompts), atomically.
void write_prompts_file(const std::string& dir, const text::Prompts& prompts);

/// Writes, atomically each, the tokenizer and sentence-transformers files of one tower's folder, so that
/// AutoTokenizer, AutoModel and SentenceTransformer(dir) load it as it is: the vocabulary (vocab.txt, or
/// vocab.json + merges.txt for byte-level BPE, tokenizer.json for Unigram and for byte-level BPE of
/// kFastTokenizerClass; vocab.txt and tokenizer.json for WordPiece of kFastTokenizerClass),
/// tokenizer_config.json (with `tokenizer_class`, e.g. BertTokenizer, MPNetTokenizer, RobertaTokenizer or
/// kFastTokenizerClass), special_tokens_map.json, sentence_bert_config.json
/// (max_seq_length = `max_length`), modules.json, 1_Pooling/config.json, config_sentence_transformers.json (the
/// similarity, `prompts` as "query" and "document", which encode_query and encode_document use, and
/// `truncate_dim` when positive), with
/// each of `layout.dense` 2_Dense/config.json, 3_Dense/config.json, ... and, when `layout.normalize`, a Normalize
/// module after them (2_Normalize/ without a Dense).
/// layout's paths are not read: the files go where sentence-transformers puts them. config.json and the weights
/// (the encoder's, each Dense module's model.safetensors) are the caller's. Throws DataError for a token
/// vocab.txt or merges.txt cannot hold (a line break; a space in a merge's half), IoError.
void write_sentence_transformer_files(const std::string& dir, const text::TokenizerSpec& tokenizer,
                                      const std::string& tokenizer_class, int64_t max_length, int64_t hidden_size,
                                      const SentenceTransformerLayout& layout, const text::Prompts& prompts = {},
                                      int64_t truncate_dim = 0);

/// transformers' tokenizer class that is tokenizer.json alone (ModernBERT's): "PreTrainedTokenizerFast".
inline constexpr const char* kFastTokenizerClass = "PreTrainedTokenizerFast";

/// Where write_sentence_transformer_files puts the i-th Dense module (from 0): "2_Dense", "3_Dense", ...
inline std::string dense_module_folder(size_t i) {
  return std::to_string(i + 2) + "_Dense";
}

}  // namespace ragmig::model
