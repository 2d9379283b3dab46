// The shared half of the tokenizers: the vocabulary's id map, the special tokens and [CLS] ... [SEP].
#include "text/tokenizer.h"

#include <algorithm>
#include <unordered_set>

#include "core/error.h"
#include "text/byte_bpe.h"
#include "text/sp_bpe.h"
#include "text/unicode.h"
#include "text/unigram.h"
#include "text/wordpiece.h"

namespace ragmig::text {

SpecialTokens roberta_special_tokens() { return {"<s>", "</s>", "<pad>", "<unk>", "<mask>"}; }

bool TokenizerSpec::strips_left(const std::string& name) const {
  return std::find(lstrip.begin(), lstrip.end(), name) != lstrip.end();
}

bool TokenizerSpec::strips_right(const std::string& name) const {
  return std::find(rstrip.begin(), rstrip.end(), name) != rstrip.end();
}

bool TokenizerSpec::has_step(NormalizerStep::Kind kind) const {
  return std::any_of(normalizer.begin(), normalizer.end(), [&](const NormalizerStep& s) { return s.kind == kind; });
}

TokenizerSpec word_piece_spec(std::vector<std::string> vocab, const TextNormalization& normalization,
                              const SpecialTokens& special) {
  TokenizerSpec spec;
  spec.vocab = std::move(vocab);
  spec.normalization = normalization;
  spec.special = special;
  return spec;
}

Tokenizer::Tokenizer(TokenizerSpec spec, const std::string& source) : spec_(std::move(spec)) {
  const std::vector<std::string>& vocab = spec_.vocab;
  if (vocab.size() > static_cast<size_t>(INT32_MAX)) throw DataError(source + ": vocabulary too large");
  ids_.reserve(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) {
    auto [it, inserted] = ids_.emplace(vocab[i], static_cast<int32_t>(i));
    if (!inserted)
      throw DataError(source, static_cast<int64_t>(i) + 1,
                      "duplicate token '" + vocab[i] + "' (first at line " + std::to_string(it->second + 1) + ")");
  }
  const auto require = [&](const std::string& name, const char* role) {
    const int32_t id = find(name);
    if (id < 0) throw DataError(source + ": vocabulary has no " + name + " token (the " + role + " token)");
    return id;
  };
  cls_id_ = require(spec_.special.cls, "cls");
  sep_id_ = require(spec_.special.sep, "sep");
  pad_id_ = require(spec_.special.pad, "pad");
  unk_id_ = require(spec_.special.unk, "unk");
  mask_id_ = find(spec_.special.mask);
  for (const auto* added : {&spec_.added_tokens, &spec_.normalized_added_tokens})
    for (const std::string& name : *added)
      if (find(name) < 0) throw DataError(source + ": added token \"" + name + "\" is not in the vocabulary");
  // The first pass's tokens: the special ones and the added tokens matched before normalisation.
  std::vector<const std::string*> names = {&spec_.special.cls, &spec_.special.sep, &spec_.special.pad,
                                           &spec_.special.unk, &spec_.special.mask};
  for (const std::string& added : spec_.added_tokens) names.push_back(&added);
  specials_ = token_set(names);
  names.clear();
  for (const std::string& added : spec_.normalized_added_tokens) names.push_back(&added);
  normalized_ = token_set(names);
}

Tokenizer::SpecialSet Tokenizer::token_set(const std::vector<const std::string*>& names) const {
  SpecialSet out;
  std::unordered_set<std::string_view> seen;
  std::vector<std::string> found;
  for (const std::string* name : names) {
    const int32_t id = find(*name);
    if (id < 0 || name->empty() || !seen.insert(*name).second) continue;
    out.tokens.push_back({*name, id, spec_.strips_left(*name), spec_.strips_right(*name)});
    found.push_back(*name);
  }
  out.trie = TokenTrie(found);
  return out;
}

void Tokenizer::split_at(std::string_view text, const SpecialSet& tokens, size_t limit, std::vector<int32_t>& ids,
                         const std::function<void(std::string_view)>& gap) const {
  size_t start = 0;  // of the text not yet tokenised
  while (ids.size() < limit) {
    // The leftmost token from `start`, the longest where several begin there.
    const TokenTrie::Match match = tokens.tokens.empty() ? TokenTrie::Match{} : tokens.trie.find(text, start);
    const size_t at = match.at;
    const Special* hit = match.index >= 0 ? &tokens.tokens[static_cast<size_t>(match.index)] : nullptr;
    size_t end = hit ? at : text.size();
    if (hit && hit->lstrip) end = start + trailing_white_space_start(text.substr(start, end - start));
    if (end > start) gap(text.substr(start, end - start));
    if (!hit) break;
    if (ids.size() < limit) ids.push_back(hit->id);
    start = at + hit->name.size();
    if (hit->rstrip) start += leading_white_space_end(text.substr(start));
  }
}

std::vector<int32_t> Tokenizer::encode_pieces(std::string_view text, int64_t max_pieces) const {
  std::vector<int32_t> ids;
  const size_t limit = max_pieces < 0 ? SIZE_MAX : static_cast<size_t>(max_pieces);
  // As the tokenizers library: the special (and unnormalised added) tokens first, then in the text between them
  // the added tokens it matches after normalising, then the model's pieces of what is left.
  const auto gap = [&](std::string_view piece) { encode_text(piece, piece.data() == text.data(), limit, ids); };
  split_at(text, specials_, limit, ids, [&](std::string_view segment) {
    if (normalized_.tokens.empty()) return gap(segment);
    split_at(segment, normalized_, limit, ids, gap);
  });
  if (ids.size() > limit) ids.resize(limit);
  return ids;
}

int32_t Tokenizer::find(std::string_view token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

int32_t Tokenizer::id_of(std::string_view token) const {
  const int32_t id = find(token);
  return id < 0 ? unk_id_ : id;
}

std::vector<std::string> Tokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> pieces;
  for (int32_t id : encode_pieces(text)) pieces.push_back(spec_.vocab[static_cast<size_t>(id)]);
  return pieces;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, int64_t max_len) const {
  if (max_len < 2)
    throw ConfigError("max_len must be at least 2 (room for " + spec_.special.cls + " and " + spec_.special.sep +
                      "), got " + std::to_string(max_len));
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(std::min<int64_t>(max_len, 512)));
  if (spec_.cls_first) ids.push_back(cls_id_);
  std::vector<int32_t> pieces = encode_pieces(text, max_len - int64_t{spec_.cls_first} - int64_t{spec_.sep_last});
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  if (spec_.sep_last) ids.push_back(sep_id_);
  return ids;
}

std::unique_ptr<Tokenizer> make_tokenizer(const TokenizerSpec& spec) {
  if (spec.kind == TokenizerKind::kByteBpe) return std::make_unique<ByteBpeTokenizer>(spec);
  if (spec.kind == TokenizerKind::kUnigram) return std::make_unique<UnigramTokenizer>(spec);
  if (spec.kind == TokenizerKind::kSentencePieceBpe) return std::make_unique<SentencePieceBpeTokenizer>(spec);
  return std::make_unique<WordPieceTokenizer>(spec.vocab, spec.normalization, spec.special);
}

}  // namespace ragmig::text
