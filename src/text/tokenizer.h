// What every tokenizer of a model gives the rest of ragmig: text -> [CLS] piece ids... [SEP] under a length
// limit, and the ids of its special tokens. Four kinds sit behind it: WordPiece (BERT, MPNet, DistilBERT:
// wordpiece.h), byte-level BPE (RoBERTa, DistilRoBERTa, ModernBERT, Qwen: byte_bpe.h), SentencePiece Unigram (XLM-R,
// multilingual-e5, paraphrase-multilingual-*: unigram.h) and SentencePiece BPE (Gemma, EmbeddingGemma: sp_bpe.h). A
// TokenizerSpec is the plain data one is built from and that a model folder reads and writes (model/st_folder.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "text/token_trie.h"

namespace ragmig::text {

/// How BertTokenizer normalises text before it splits words: Hugging Face's do_lower_case, strip_accents
/// (whose null means "as do_lower_case") and tokenize_chinese_chars.
struct TextNormalization {
  bool lower_case = true;
  bool strip_accents = true;
  bool split_cjk = true;
  bool operator==(const TextNormalization&) const = default;
};

/// The tokens a tokenizer puts around texts and pads with, by name: BERT's, or a folder's own (MPNet's
/// tokenizer_config.json says cls "<s>", sep "</s>", pad "<pad>", unk "[UNK]", mask "<mask>").
struct SpecialTokens {
  std::string cls = "[CLS]", sep = "[SEP]", pad = "[PAD]", unk = "[UNK]", mask = "[MASK]";
  bool operator==(const SpecialTokens&) const = default;
};

/// RoBERTa's: <s>, </s>, <pad>, <unk>, <mask>.
SpecialTokens roberta_special_tokens();

enum class TokenizerKind {
  kWordPiece,  ///< BertTokenizer: normalisation, then greedy longest-match pieces with "##" continuations
  kByteBpe,    ///< RobertaTokenizer / GPT-2's: bytes as characters, split GPT-2's way, then BPE merges
  kUnigram,    ///< XLMRobertaTokenizer / SentencePiece's: normalise, mark spaces, the best-scoring pieces
  /// GemmaTokenizer / SentencePiece's BPE: spaces marked ("▁"), BPE merges over characters, the bytes of a
  /// character the vocabulary lacks as <0xXX> tokens (byte fallback)
  kSentencePieceBpe,
};

/// One step of a Unigram or byte-level BPE tokenizer's normaliser (tokenizer.json's "normalizer", a Sequence of
/// these; byte-level BPE takes kNfc alone, as GPT-NeoX's, OLMo's and ModernBERT's files have it).
struct NormalizerStep {
  enum class Kind {
    kPrecompiled,       ///< SentencePiece's charsmap (precompiled_charsmap.h); `text` holds its bytes
    kReplace,           ///< every `text` -> `content`
    kReplaceSpaceRuns,  ///< every run of two or more spaces -> `content` (the Regex " {2,}")
    kStrip,             ///< whitespace off the left and/or right end
    kNfc,               ///< Unicode's NFC (nfc.h)
    kPrepend,           ///< `content` before a non-empty text (Llama's and Mistral's legacy "▁")
  };
  Kind kind = Kind::kPrecompiled;
  std::string text{}, content{};
  bool left = false, right = false;  ///< kStrip's ends
  bool operator==(const NormalizerStep&) const = default;
};

/// How a Unigram tokenizer cuts normalised text into the pieces it tokenises (tokenizer.json's "pre_tokenizer":
/// an optional WhitespaceSplit, then Metaspace).
struct MetaspaceSplit {
  enum class Prepend { kAlways, kFirst, kNever };
  bool whitespace_split = false;       ///< split at whitespace first, dropping it (transformers 5's XLM-R)
  std::string replacement = "\u2581";  ///< what spaces become: "▁"
  Prepend prepend = Prepend::kAlways;  ///< a replacement before each piece (kFirst: the text's first only)
  bool split = true;                   ///< cut before every replacement
  bool operator==(const MetaspaceSplit&) const = default;
};

/// The pattern a byte-level BPE tokenizer splits text by before merging (tokenizer.json's pre_tokenizer): GPT-2's
/// (a ByteLevel pre-tokenizer with use_regex: RoBERTa, ModernBERT), or, in a Split before a ByteLevel without
/// it, Qwen2's (Qwen2, Qwen2.5, Qwen3 and their embedding models) or Llama 3's (Qwen2's with runs of up to three
/// digits where Qwen2 has single digits). byte_bpe.h spells them out.
enum class BpeSplit { kGpt2, kQwen2, kLlama3 };

/// Everything a tokenizer is built from.
struct TokenizerSpec {
  TokenizerKind kind = TokenizerKind::kWordPiece;
  std::vector<std::string> vocab;  ///< token of id i
  SpecialTokens special;
  TextNormalization normalization;  ///< WordPiece only
  /// Byte-level and SentencePiece BPE only: the merge rules, the first applied first; both halves and their
  /// concatenation are vocabulary tokens (in the byte-as-character alphabet, "Ġ" for a space; "▁" for SentencePiece's).
  std::vector<std::pair<std::string, std::string>> merges;
  bool add_prefix_space = false;  ///< byte-level BPE only: a space before a non-empty text not starting with one
  BpeSplit bpe_split = BpeSplit::kGpt2;  ///< byte-level BPE only
  /// encode() puts cls before the pieces (BERT's [CLS] $A [SEP], RoBERTa's <s> $A </s>); false: not (Qwen3-Embedding's
  /// $A <|endoftext|>, whose last token the embedding is read from).
  bool cls_first = true;
  /// encode() puts sep after the pieces; false: not (a base decoder's framing as it was pretrained: Llama's and
  /// Mistral's <s> $A, Llama 3's <|begin_of_text|> $A, Qwen3-Base's bare $A). The names stay in the vocabulary.
  bool sep_last = true;
  std::vector<double> scores;              ///< Unigram only: each token's log probability
  /// Unigram, byte-level BPE (kNfc) and SentencePiece BPE (kReplace, kNfc, kPrepend) only, applied in order
  std::vector<NormalizerStep> normalizer;
  MetaspaceSplit pre_tokenizer;  ///< Unigram's; SentencePiece BPE's where metaspace (split false)
  /// SentencePiece BPE only: spaces become pre_tokenizer.replacement, which is prepended as it says, before the
  /// merges (a Metaspace pre-tokenizer: Llama's and Mistral's tokenizer.json as transformers 5 writes it)
  bool metaspace = false;
  /// Special tokens (by name) that take the whitespace before / after them where a text contains them
  /// (tokenizer.json's added_tokens' lstrip / rstrip, as roberta-base's <mask> on the hub).
  std::vector<std::string> lstrip, rstrip;
  /// Vocabulary tokens other than the five special ones that texts are searched for as the special tokens are
  /// (tokenizer.json's other added_tokens with normalized false: ModernBERT's [unused0], ...), in id order.
  std::vector<std::string> added_tokens;
  /// The added tokens with normalized true (GPT-NeoX's and ModernBERT's runs of spaces): searched for in the text
  /// between the others, as the tokenizers library does after normalising (here before: NFC keeps them as they
  /// are), in id order.
  std::vector<std::string> normalized_added_tokens;
  bool operator==(const TokenizerSpec&) const = default;

  /// Whether the special token `name` takes the whitespace before it (lstrip) / after it (rstrip).
  bool strips_left(const std::string& name) const;
  bool strips_right(const std::string& name) const;
  /// Whether `normalizer` has a step of `kind`.
  bool has_step(NormalizerStep::Kind kind) const;
};

/// A WordPiece spec (BERT's special tokens and uncased normalisation unless given).
TokenizerSpec word_piece_spec(std::vector<std::string> vocab, const TextNormalization& normalization = {},
                              const SpecialTokens& special = {});

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  Tokenizer(const Tokenizer&) = default;
  Tokenizer(Tokenizer&&) = default;

  /// Piece ids without [CLS]/[SEP]; at most `max_pieces` of them when that is >= 0, and tokenizing stops there,
  /// so long passages cost little. Special tokens written in the text (the five names of special_tokens() and
  /// the spec's added_tokens, leftmost and longest first; then its normalized_added_tokens in the text between
  /// them) keep their ids, as Hugging Face's tokenizers keep them; the text between them is
  /// tokenised piece by piece (each a text of its own, as there), less the whitespace an lstrip / rstrip token
  /// takes.
  std::vector<int32_t> encode_pieces(std::string_view text, int64_t max_pieces = -1) const;
  /// [CLS] piece ids... [SEP], with the pieces truncated so the total is at most max_len (max_len >= 2, else
  /// ConfigError); without cls or sep where the spec says so (cls_first, sep_last: then an empty text may give no
  /// ids at all, as transformers gives it).
  std::vector<int32_t> encode(std::string_view text, int64_t max_len) const;
  /// The pieces of encode_pieces as strings.
  std::vector<std::string> tokenize(std::string_view text) const;

  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t unk_id() const { return unk_id_; }
  /// The id of the mask token, or -1 when the vocabulary has none.
  int32_t mask_id() const { return mask_id_; }
  const TokenizerSpec& spec() const { return spec_; }
  const SpecialTokens& special_tokens() const { return spec_.special; }
  int64_t vocab_size() const { return static_cast<int64_t>(spec_.vocab.size()); }
  const std::vector<std::string>& vocab() const { return spec_.vocab; }
  /// unk_id() when the token is not in the vocabulary.
  int32_t id_of(std::string_view token) const;
  /// -1 when the token is not in the vocabulary.
  int32_t find(std::string_view token) const;

 protected:
  /// Throws DataError naming `source` (and the line, id + 1, of a duplicate token) for duplicates, a missing
  /// cls/sep/pad/unk token (the mask token is optional) or an added token not in the vocabulary.
  Tokenizer(TokenizerSpec spec, const std::string& source);
  /// The ids of text without special tokens, appended to `out` until it holds `limit`. `at_start`: the text begins
  /// the whole text (no special token before it), where a Metaspace with prepend_scheme "first" prepends.
  virtual void encode_text(std::string_view text, bool at_start, size_t limit, std::vector<int32_t>& out) const = 0;

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  struct Special {
    std::string name;
    int32_t id;
    bool lstrip, rstrip;
  };
  // Tokens searched for in texts, and the trie that finds them (token_trie.h).
  struct SpecialSet {
    std::vector<Special> tokens;
    TokenTrie trie;
  };

  TokenizerSpec spec_;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  // The tokens of `names` the vocabulary has, once each.
  SpecialSet token_set(const std::vector<const std::string*>& names) const;
  // Splits `text` at the leftmost (then longest) occurrences of `tokens`, whose ids go to `ids`; `gap` gets the
  // text between them, less the whitespace an lstrip / rstrip token takes. Stops once `ids` holds `limit`.
  void split_at(std::string_view text, const SpecialSet& tokens, size_t limit, std::vector<int32_t>& ids,
                const std::function<void(std::string_view)>& gap) const;

  SpecialSet specials_;    // the special tokens and added_tokens the vocabulary has
  SpecialSet normalized_;  // the normalized_added_tokens
  int32_t cls_id_ = -1, sep_id_ = -1, pad_id_ = -1, unk_id_ = -1, mask_id_ = -1;
};

/// The tokenizer of `spec`'s kind. Throws DataError as the constructors do.
std::unique_ptr<Tokenizer> make_tokenizer(const TokenizerSpec& spec);

}  // namespace ragmig::text
