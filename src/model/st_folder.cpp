// Tokenizer and sentence-transformers files of model folders (see st_folder.h). Readers accept what
// transformers 4-5 and sentence-transformers 2-6 write; the writer writes the classic layout that all of
// them load (checked against the real libraries by tests/hf).
#include "model/st_folder.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_errors.h"
#include "model/json_member.h"
#include "model/pooling_mode.h"
#include "model/tokenizer_json.h"
#include "model/unigram_json.h"
#include "text/sp_bpe.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ragmig::model {
namespace {

// transformers writes model_max_length = int(1e30) for "no limit".
constexpr double kNoLimitSentinel = 1e6;

std::optional<json> read_optional(const fs::path& path) {
  if (!fs::exists(path)) return std::nullopt;
  return read_json_file(path.string());
}

// j[key] as a flag; `of` names what j is where it is not the file's top level (e.g. an added token).
std::optional<bool> get_bool(const json& j, const std::string& key, const fs::path& file, const std::string& of = "") {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean())
    throw DataError(file.string() + ": key \"" + key + "\"" + (of.empty() ? "" : " of " + of) +
                    ": expected true, false or null");
  return it->get<bool>();
}

std::optional<double> get_number(const json& j, const std::string& key, const fs::path& file) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) throw DataError(file.string() + ": key \"" + key + "\": expected a number");
  return it->get<double>();
}

// HF's strip_accents: null (or absent) follows lower-casing.
void set_normalization(text::TextNormalization& n, std::optional<bool> lower, std::optional<bool> strip,
                       std::optional<bool> cjk) {
  if (lower) n.lower_case = *lower;
  n.strip_accents = strip.value_or(n.lower_case);
  if (cjk) n.split_cjk = *cjk;
}

// token: id, every id of 0..n-1 once (tokenizer.json's model.vocab, vocab.json).
std::vector<std::string> vocab_from_ids(const json& vocab, const fs::path& file, const std::string& key) {
  const std::string where = file.string() + (key.empty() ? "" : ": key \"" + key + "\"");
  if (!vocab.is_object()) throw DataError(where + ": expected an object of token: id");
  std::vector<std::string> tokens(vocab.size());
  std::vector<bool> seen(vocab.size(), false);
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<uint64_t>() >= tokens.size() ||
        seen[id.get<size_t>()])
      throw DataError(where + ": token \"" + token + "\" has id " + id.dump() + " (expected each of 0.." +
                      std::to_string(tokens.size() - 1) + " once)");
    seen[id.get<size_t>()] = true;
    tokens[id.get<size_t>()] = token;
  }
  return tokens;
}

using Merges = std::vector<std::pair<std::string, std::string>>;

// "left right" (merges.txt, older tokenizer.json files); false if it is not two halves.
bool split_merge(std::string_view line, std::pair<std::string, std::string>& out) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
      line.find(' ', space + 1) != std::string_view::npos)
    return false;
  out = {std::string(line.substr(0, space)), std::string(line.substr(space + 1))};
  return true;
}

// tokenizer.json's model.merges: ["left right", ...] or, since tokenizers 0.20, [["left", "right"], ...].
Merges merges_from_json(const json& merges, const fs::path& file) {
  if (!merges.is_array()) throw DataError(file.string() + ": key \"model.merges\": expected an array of merges");
  Merges out;
  out.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    std::pair<std::string, std::string> merge;
    if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
      merge = {m[0].get<std::string>(), m[1].get<std::string>()};
    else if (!m.is_string() || !split_merge(m.get_ref<const std::string&>(), merge))
      throw DataError(file.string() + ": key \"model.merges[" + std::to_string(i) +
                      "]\": expected \"left right\" or [\"left\", \"right\"], got " + m.dump());
    out.push_back(std::move(merge));
  }
  return out;
}

// merges.txt: an optional "#version" line, then "left right" per line.
Merges read_merges_file(const fs::path& file) {
  const std::string text = read_file(file.string());
  Merges out;
  size_t start = 0, line_no = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    start = end + 1;
    if (line.starts_with("#version")) continue;
    std::pair<std::string, std::string> merge;
    if (!split_merge(line, merge))
      throw DataError(file.string(), static_cast<int64_t>(line_no),
                      "expected a merge \"left right\", got \"" + std::string(line) + "\"");
    out.push_back(std::move(merge));
  }
  return out;
}

// Whether a tokenizer.json normaliser is NFC (alone or as a Sequence of NFC): throws `fail` for any other.
template <typename Fail>
bool nfc_normalizer(const json& n, const Fail& fail) {
  if (n.is_null()) return false;
  std::string type = string_member(n, "type");
  if (type.empty()) type = "?";
  if (type == "NFC") return true;
  if (type == "Sequence" && n.contains("normalizers") && n["normalizers"].is_array()) {
    bool nfc = false;
    for (const json& step : n["normalizers"]) nfc = nfc_normalizer(step, fail) || nfc;
    return nfc;
  }
  fail("normalizer", "a " + type + " normalizer is not supported");
  return false;
}

// A tokenizer.json BPE model's settings neither BPE tokenizer of ragmig runs: subword affixes, dropout; `fail` names
// the key.
template <typename Fail>
void refuse_bpe_extras(const json& model, const Fail& fail) {
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const auto it = model.find(key); it != model.end() && !it->is_null() && *it != "")
      fail(std::string("model.") + key, it->dump() + " is not supported");
  if (const auto it = model.find("dropout"); it != model.end() && !it->is_null() && *it != 0.0)
    fail("model.dropout", it->dump() + " is not supported");
}

// What ragmig's ByteBpeTokenizer runs of a tokenizer.json BPE model: no normaliser or NFC; a ByteLevel
// pre-tokenizer with GPT-2's split, or a Sequence of a Split by Qwen2's or Llama 3's pattern (Isolated) and a
// ByteLevel without a split of its own; no subword affixes, dropout or byte fallback. Returns the ByteLevel's
// add_prefix_space; sets the spec's normaliser and split.
bool check_byte_level_bpe(const json& tj, const fs::path& file, text::TokenizerSpec& spec) {
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw DataError(file.string() + ": key \"" + key + "\": " + what +
                    " (ragmig runs byte-level BPE as RoBERTa's, ModernBERT's and Qwen's: no normalizer or NFC, a "
                    "ByteLevel pre_tokenizer, or a Split by Qwen2's or Llama 3's pattern then a ByteLevel)");
  };
  if (const auto n = tj.find("normalizer"); n != tj.end() && nfc_normalizer(*n, fail)) {
    text::NormalizerStep nfc;
    nfc.kind = text::NormalizerStep::Kind::kNfc;
    spec.normalizer = {nfc};
  }
  const auto pre = tj.find("pre_tokenizer");
  if (pre == tj.end() || !pre->is_object()) fail("pre_tokenizer", "expected a ByteLevel pre-tokenizer");
  const json* byte_level = &*pre;
  if (string_member(*pre, "type") == "Sequence") {
    const json& steps = member(*pre, "pretokenizers");
    if (!steps.is_array() || steps.size() != 2 || string_member(steps[0], "type") != "Split")
      fail("pre_tokenizer", "expected a Sequence of a Split and a ByteLevel");
    const json& split = steps[0];
    const json& pattern = member(split, "pattern");
    const std::string regex = pattern.is_object() ? string_member(pattern, "Regex") : "";
    if (regex == split_pattern(text::BpeSplit::kQwen2))
      spec.bpe_split = text::BpeSplit::kQwen2;
    else if (regex == split_pattern(text::BpeSplit::kLlama3))
      spec.bpe_split = text::BpeSplit::kLlama3;
    else
      fail("pre_tokenizer.pretokenizers[0].pattern", pattern.dump().substr(0, 200) + " is not Qwen2's nor Llama 3's");
    if (string_member(split, "behavior") != "Isolated" || get_bool(split, "invert", file).value_or(false))
      fail("pre_tokenizer.pretokenizers[0]", "expected behavior \"Isolated\" and invert false");
    byte_level = &steps[1];
    if (string_member(*byte_level, "type") != "ByteLevel" || get_bool(*byte_level, "use_regex", file).value_or(true))
      fail("pre_tokenizer.pretokenizers[1]", "expected a ByteLevel with use_regex false");
  } else if (string_member(*pre, "type") != "ByteLevel") {
    fail("pre_tokenizer", "expected a ByteLevel pre-tokenizer");
  } else if (!get_bool(*pre, "use_regex", file).value_or(true)) {
    fail("pre_tokenizer.use_regex", "false is not supported");
  }
  const json& model = tj["model"];
  refuse_bpe_extras(model, fail);
  if (get_bool(model, "byte_fallback", file).value_or(false)) fail("model.byte_fallback", "true is not supported");
  return get_bool(*byte_level, "add_prefix_space", file).value_or(false);
}

bool in_vocabulary(const text::TokenizerSpec& spec, const std::string& token) {
  return std::find(spec.vocab.begin(), spec.vocab.end(), token) != spec.vocab.end();
}

// A special token's name: a string, or an AddedToken as transformers 4 serialised it ({"content": ...}).
std::optional<std::string> token_name(const json& j, const std::string& key, const fs::path& file) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  throw DataError(file.string() + ": key \"" + key + "\": expected a token (a string, or {\"content\": string})");
}

// The special tokens tokenizer.json's post_processor puts around a text: a TemplateProcessing whose single template
// is [bos] $A [eos] (either, both or neither), alone or in a Sequence beside ByteLevel processors (Llama 3's), a
// ByteLevel alone (Qwen3-Base's: no token added) or none.
struct TemplateFraming {
  std::optional<std::string> bos, eos;
};

TemplateFraming template_framing(const json& tj, const fs::path& file) {
  const std::string where = file.string() + ": key \"post_processor\"";
  const json& post = member(tj, "post_processor");
  const json* processor = &post;
  if (post.is_object() && string_member(post, "type") == "Sequence") {
    processor = nullptr;
    const json& steps = member(post, "processors");
    if (!steps.is_array()) throw DataError(where + ".processors: expected an array");
    for (const json& step : steps) {
      const std::string type = string_member(step, "type");
      if (type == "TemplateProcessing" && !processor)
        processor = &step;
      else if (type != "ByteLevel")
        throw DataError(where + ": expected a Sequence of ByteLevel processors and one TemplateProcessing, got " +
                        post.dump().substr(0, 200));
    }
  }
  TemplateFraming framing;
  if (!processor || processor->is_null() || string_member(*processor, "type") == "ByteLevel") return framing;
  const json& single = member(*processor, "single");
  if (string_member(*processor, "type") != "TemplateProcessing" || !single.is_array())
    throw DataError(where + ": expected a TemplateProcessing, a ByteLevel or null, got " + post.dump().substr(0, 200));
  std::vector<std::string> parts;
  for (const json& part : single) {
    const json& token = member(part, "SpecialToken");
    parts.push_back(token.is_object() ? string_member(token, "id") : member(part, "Sequence").is_object() ? "$A" : "?");
  }
  const auto a = std::find(parts.begin(), parts.end(), "$A");
  const auto at = static_cast<size_t>(a - parts.begin());
  if (a == parts.end() || std::count(parts.begin(), parts.end(), "$A") != 1 || at > 1 || parts.size() - at > 2)
    throw DataError(where + ": expected [bos] $A [eos], got " + single.dump().substr(0, 200));
  if (at == 1) framing.bos = parts[0];
  if (parts.size() - at == 2) framing.eos = parts.back();
  return framing;
}

// Frames the spec's texts with bos and eos where given (cls_first, sep_last): bos becomes its cls, eos its sep. The
// names stay set where a token is not added: cls is bos or else the sep, and the sep is eos or else `end`, the
// folder's end-of-text token (which must be in the vocabulary); the padding and unknown tokens fall back to the sep
// where the vocabulary has none (Llama's and Qwen's have no padding token; byte-level BPE never meets an unknown).
void set_framing(const std::optional<std::string>& bos, const std::optional<std::string>& eos, const std::string& end,
                 const std::string& where, text::TokenizerSpec& spec) {
  for (const auto* token : {&bos, &eos})
    if (*token && !in_vocabulary(spec, **token))
      throw DataError(where + ": \"" + **token + "\" is not in the vocabulary");
  const std::string sep = eos.value_or(end);
  if (!in_vocabulary(spec, sep))
    throw DataError(where + ": texts are framed without an eos token, and the folder's end-of-text token \"" + sep +
                    "\" (tokenizer_config.json's eos_token) is not in the vocabulary");
  spec.cls_first = bos.has_value();
  spec.sep_last = eos.has_value();
  spec.special.cls = bos.value_or(sep);
  spec.special.sep = sep;
  if (!in_vocabulary(spec, spec.special.pad)) spec.special.pad = sep;
  if (!in_vocabulary(spec, spec.special.unk)) spec.special.unk = sep;
}

// A byte-level BPE split by Qwen2's or Llama 3's pattern frames texts as its post_processor says: Qwen3-Embedding's
// $A <|endoftext|> (the embedding read from that last token), Llama 3's <|begin_of_text|> $A, Qwen3-Base's $A.
void read_byte_level_framing(const json& tj, const fs::path& tj_path, const std::optional<json>& tc,
                             const fs::path& tc_path, text::TokenizerSpec& spec) {
  const TemplateFraming framing = template_framing(tj, tj_path);
  std::string end = tc ? token_name(*tc, "eos_token", tc_path).value_or("") : "";
  if (!in_vocabulary(spec, end)) end = spec.special.pad;  // Qwen's base files name <|endoftext|> both
  set_framing(framing.bos, framing.eos, end, tj_path.string() + ": key \"post_processor\"", spec);
}

// tokenizer.json's added tokens whose ids follow the model's vocabulary (the tokenizers library keeps tokens added
// after training, such as ModernBERT's [CLS] ... [MASK] and [unused0] ..., out of model.vocab), appended in id
// order; each must take the next id, and one within the vocabulary must be the token there.
void append_added_tokens(const json& tj, const fs::path& file, std::vector<std::string>& vocab) {
  const auto list = tj.find("added_tokens");
  if (list == tj.end() || !list->is_array()) return;
  std::map<int64_t, std::string> beyond;
  for (const json& t : *list) {
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() || !t.contains("content") ||
        !t["content"].is_string())
      throw DataError(file.string() +
                      ": key \"added_tokens\": expected {\"id\": integer, \"content\": string, ...}, got " +
                      t.dump().substr(0, 200));
    const int64_t id = t["id"].get<int64_t>();
    const std::string content = t["content"].get<std::string>();
    if (id >= 0 && id < static_cast<int64_t>(vocab.size())) {
      if (vocab[static_cast<size_t>(id)] != content)
        throw DataError(file.string() + ": key \"added_tokens\": \"" + content + "\" has id " + std::to_string(id) +
                        ", which model.vocab gives \"" + vocab[static_cast<size_t>(id)] + "\"");
    } else {
      beyond[id] = content;
    }
  }
  for (const auto& [id, content] : beyond) {
    if (id != static_cast<int64_t>(vocab.size()))
      throw DataError(file.string() + ": key \"added_tokens\": \"" + content + "\" has id " + std::to_string(id) +
                      "; the vocabulary ends at " + std::to_string(vocab.size()) +
                      " (ids must follow it without gaps)");
    vocab.push_back(content);
  }
}

// tokenizer.json's added tokens other than the five special ones that the vocabulary has, in id order, into the
// spec's added_tokens or (normalized, which the tokenizers library takes as !special where absent)
// normalized_added_tokens: texts are searched for them.
void read_added_tokens(const json& tj, const fs::path& file, text::TokenizerSpec& spec) {
  const auto list = tj.find("added_tokens");
  if (list == tj.end() || !list->is_array()) return;
  const text::SpecialTokens& s = spec.special;
  const std::set<std::string> vocab(spec.vocab.begin(), spec.vocab.end());
  for (const json& t : *list) {
    if (!t.is_object() || !t.contains("content") || !t["content"].is_string()) continue;
    const std::string name = t["content"].get<std::string>();
    if (name == s.cls || name == s.sep || name == s.pad || name == s.unk || name == s.mask || name.empty() ||
        !vocab.count(name))
      continue;
    const bool special = get_bool(t, "special", file, "added token \"" + name + "\"").value_or(false);
    const auto normalized = t.find("normalized");
    const bool is_normalized = normalized != t.end() && normalized->is_boolean() ? normalized->get<bool>() : !special;
    (is_normalized ? spec.normalized_added_tokens : spec.added_tokens).push_back(name);
  }
}

// What ragmig's SentencePieceBpeTokenizer runs of a tokenizer.json BPE model with byte_fallback: Replace, Prepend
// and NFC normaliser steps (Gemma's Replace " " -> "▁"; Mistral's legacy Prepend "▁" then Replace); no
// pre-tokenizer, a Split at " " (MergedWithPrevious, as transformers 5's GemmaTokenizer writes) that the Replace of
// " " before it leaves nothing to split, or a Metaspace with split false (transformers 5's Llama and Mistral); no
// subword affixes or dropout. Sets the spec's kind, normaliser and Metaspace. ragmig runs the file's pipeline as the
// tokenizers library and transformers 4 do; transformers 5's LlamaTokenizer puts a Metaspace in place of a legacy
// file's normaliser (the two differ only for a text that starts with a space or that follows a special token).
void check_sentencepiece_bpe(const json& tj, const fs::path& file, text::TokenizerSpec& spec) {
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw DataError(
        file.string() + ": key \"" + key + "\": " + what +
        " (ragmig runs BPE with byte fallback as Gemma's, Llama's and Mistral's tokenizer.json have it: Replace \" \" "
        "by \"\u2581\" in the normalizer, or a Metaspace pre_tokenizer that does not split)");
  };
  spec.kind = text::TokenizerKind::kSentencePieceBpe;
  spec.normalizer = normalizer_from_json(tj, file.string());
  bool replaces_spaces = false;
  for (const text::NormalizerStep& step : spec.normalizer) {
    if (step.kind != text::NormalizerStep::Kind::kReplace && step.kind != text::NormalizerStep::Kind::kNfc &&
        step.kind != text::NormalizerStep::Kind::kPrepend)
      fail("normalizer", "only Replace (a string), Prepend and NFC steps are supported");
    replaces_spaces = replaces_spaces || (step.kind == text::NormalizerStep::Kind::kReplace && step.text == " ");
  }
  if (const auto pre = tj.find("pre_tokenizer"); pre != tj.end() && !pre->is_null()) {
    if (string_member(*pre, "type") == "Metaspace") {
      spec.metaspace = true;
      spec.pre_tokenizer = metaspace_from_json(*pre, file.string(), "pre_tokenizer");
      if (spec.pre_tokenizer.split) fail("pre_tokenizer.split", "true is not supported (a Metaspace that splits)");
    } else {
      const json& pattern = member(*pre, "pattern");
      const bool space_split =
          string_member(*pre, "type") == "Split" && pattern.is_object() && string_member(pattern, "String") == " " &&
          string_member(*pre, "behavior") == "MergedWithPrevious" && !get_bool(*pre, "invert", file).value_or(false);
      if (!space_split || !replaces_spaces)
        fail("pre_tokenizer",
             "expected none, a Metaspace, or a Split at \" \" after a normalizer that replaces every \" \"");
    }
  }
  const json& model = tj["model"];
  refuse_bpe_extras(model, fail);
  if (get_bool(model, "ignore_merges", file).value_or(false)) fail("model.ignore_merges", "true is not supported");
}

// A SentencePiece BPE frames texts with bos and eos as transformers 4 does: by tokenizer_config.json's
// add_bos_token and add_eos_token where it has either (transformers 4 then rebuilds the post-processor from them;
// the one missing takes LlamaTokenizerFast's and GemmaTokenizerFast's default: bos added, eos not), else by
// tokenizer.json's post-processor: EmbeddingGemma's <bos> $A <eos>, e5-mistral's <s> $A </s>, and the base models'
// <bos> $A and <s> $A, as they were pretrained. transformers 5 frames by the post-processor alone (it drops the two
// keys when tokenizer.json is there); transformers 4 and the models' authors by the keys.
void read_bos_eos_framing(const json& tj, const fs::path& tj_path, const std::optional<json>& tc,
                          const fs::path& tc_path, text::TokenizerSpec& spec) {
  std::string bos = spec.special.cls, eos = spec.special.sep;
  const std::optional<bool> add_bos = tc ? get_bool(*tc, "add_bos_token", tc_path) : std::nullopt;
  const std::optional<bool> add_eos = tc ? get_bool(*tc, "add_eos_token", tc_path) : std::nullopt;
  if (tc) {
    bos = token_name(*tc, "bos_token", tc_path).value_or(bos);
    eos = token_name(*tc, "eos_token", tc_path).value_or(eos);
  }
  if (!add_bos && !add_eos) {
    const TemplateFraming framing = template_framing(tj, tj_path);
    set_framing(framing.bos, framing.eos, eos, tj_path.string() + ": key \"post_processor\"", spec);
    return;
  }
  set_framing(add_bos.value_or(true) ? std::optional(bos) : std::nullopt,
              add_eos.value_or(false) ? std::optional(eos) : std::nullopt, eos,
              tc_path.string() + ": keys \"add_bos_token\" and \"add_eos_token\"", spec);
}

// Each name the file gives replaces the default; returns whether it gave any (then special_tokens_map.json, the
// older place for them, is not read).
bool read_special_tokens(const json& j, const fs::path& file, text::SpecialTokens& out) {
  if (!j.is_object()) return false;
  bool any = false;
  using T = text::SpecialTokens;
  for (auto [key, member] : {std::pair{"cls_token", &T::cls}, {"sep_token", &T::sep}, {"pad_token", &T::pad},
                             {"unk_token", &T::unk}, {"mask_token", &T::mask}})
    if (auto name = token_name(j, key, file)) {
      out.*member = *name;
      any = true;
    }
  return any;
}

// The special tokens that take the whitespace beside them (lstrip / rstrip) per tokenizer.json's added_tokens,
// else tokenizer_config.json's added_tokens_decoder (transformers' record of the same).
void read_token_stripping(const std::optional<json>& tj, const fs::path& tj_path, const std::optional<json>& tc,
                          const fs::path& tc_path, text::TokenizerSpec& spec) {
  const json* list = tj ? &member(*tj, "added_tokens") : nullptr;
  fs::path file = tj_path;
  if ((!list || !list->is_array()) && tc) {
    list = &member(*tc, "added_tokens_decoder");
    file = tc_path;
  }
  if (!list || !(list->is_array() || list->is_object())) return;
  const text::SpecialTokens& s = spec.special;
  for (const auto& t : *list) {
    if (!t.is_object() || !t.contains("content") || !t["content"].is_string()) continue;
    const std::string name = t["content"].get<std::string>();
    const auto listed = [&](const std::vector<std::string>& v) {
      return std::find(v.begin(), v.end(), name) != v.end();
    };
    const bool added = listed(spec.added_tokens) || listed(spec.normalized_added_tokens);
    if (name != s.cls && name != s.sep && name != s.pad && name != s.unk && name != s.mask && !added) continue;
    const std::string where = "added token \"" + name + "\"";
    if (get_bool(t, "lstrip", file, where).value_or(false)) spec.lstrip.push_back(name);
    if (get_bool(t, "rstrip", file, where).value_or(false)) spec.rstrip.push_back(name);
  }
  std::sort(spec.lstrip.begin(), spec.lstrip.end());
  std::sort(spec.rstrip.begin(), spec.rstrip.end());
}

// The module types sentence-transformers 2-5 and 6 write, by the class name at their end.
std::string module_class(const std::string& type) { return type.substr(type.rfind('.') + 1); }

std::string pooling_of(const json& pc, const fs::path& file) {
  if (const auto it = pc.find("pooling_mode"); it != pc.end()) {  // sentence-transformers 6
    if (!it->is_string()) throw DataError(file.string() + ": key \"pooling_mode\": expected a string");
    const std::string mode = it->get<std::string>();
    if (pooling_named(mode)) return mode;
    throw DataError(file.string() + ": key \"pooling_mode\": \"" + mode + "\" is not supported (ragmig pools " +
                    pooling_choices() + ")");
  }
  std::vector<std::string> on;
  for (const auto& [key, value] : pc.items())
    if (key.rfind("pooling_mode_", 0) == 0 && value.is_boolean() && value.get<bool>()) on.push_back(key);
  if (on == std::vector<std::string>{"pooling_mode_mean_tokens"}) return "mean";
  if (on == std::vector<std::string>{"pooling_mode_cls_token"}) return "cls";
  if (on == std::vector<std::string>{"pooling_mode_max_tokens"}) return "max";
  if (on == std::vector<std::string>{"pooling_mode_mean_sqrt_len_tokens"}) return "mean_sqrt_len_tokens";
  if (on == std::vector<std::string>{"pooling_mode_lasttoken"}) return "lasttoken";
  std::string list;
  for (const auto& k : on) list += (list.empty() ? "" : ", ") + k;
  throw DataError(file.string() + ": pooling " + (list.empty() ? "none" : list) +
                  " is not supported (ragmig pools with one of pooling_mode_mean_tokens, pooling_mode_cls_token,"
                  " pooling_mode_max_tokens, pooling_mode_mean_sqrt_len_tokens, pooling_mode_lasttoken)");
}

void write_json(const fs::path& path, const json& j) { write_file_atomic(path, j.dump(2) + "\n"); }

// config_sentence_transformers.json's prompts, under the names sentence-transformers' encode_query and
// encode_document look up first, and none by default (a model folder's adds its similarity and truncation).
json st_config(const text::Prompts& prompts) {
  return {{"prompts", {{"query", prompts.query}, {"document", prompts.passage}}}, {"default_prompt_name", nullptr}};
}

}  // namespace

json read_json_file(const std::string& path) {
  const std::string text = read_file(path);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw DataError(path + ": not valid JSON: " + describe_json_error(e));
  }
}

std::vector<std::string> read_vocab_file(const std::string& path) {
  std::string text = read_file(path);
  std::vector<std::string> vocab;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    vocab.push_back(std::move(line));
    start = end + 1;
  }
  return vocab;
}

FolderTokenizer read_folder_tokenizer(const std::string& dir) {
  const fs::path folder(dir);
  FolderTokenizer out;
  text::TokenizerSpec& spec = out.spec;
  const fs::path tj_path = folder / "tokenizer.json", tc_path = folder / "tokenizer_config.json",
                 sb_path = folder / "sentence_bert_config.json", vj_path = folder / "vocab.json",
                 merges_path = folder / "merges.txt";
  const auto tj = read_optional(tj_path);
  const auto tc = read_optional(tc_path);
  const json* tj_model = nullptr;
  if (tj) {
    const auto model = tj->find("model");
    const std::string type = model != tj->end() && model->is_object() ? string_member(*model, "type") : "";
    if (type != "WordPiece" && type != "BPE" && type != "Unigram")
      throw DataError(tj_path.string() +
                      ": key \"model\": expected a WordPiece (BERT), BPE (RoBERTa) or Unigram (XLM-R) tokenizer" +
                      (type.empty() ? std::string() : ", got " + type));
    tj_model = &*model;
  }
  std::optional<bool> prefix_space;  // tokenizer.json's pre-tokenizer's
  if (tj_model && (*tj_model)["type"] == "Unigram") {
    spec = unigram_from_tokenizer_json(*tj, tj_path.string());
    out.vocab_file = tj_path.string();
  } else if (tj_model && (*tj_model)["type"] == "BPE") {
    spec.kind = text::TokenizerKind::kByteBpe;
    if (get_bool(*tj_model, "byte_fallback", tj_path).value_or(false))
      check_sentencepiece_bpe(*tj, tj_path, spec);
    else
      prefix_space = check_byte_level_bpe(*tj, tj_path, spec);
    spec.vocab = vocab_from_ids(member(*tj_model, "vocab"), tj_path, "model.vocab");
    append_added_tokens(*tj, tj_path, spec.vocab);
    if (spec.kind == text::TokenizerKind::kSentencePieceBpe) {  // byte fallback needs every byte's token
      const std::set<std::string_view> tokens(spec.vocab.begin(), spec.vocab.end());
      for (int b = 0; b < 256; ++b)
        if (const std::string name = text::SentencePieceBpeTokenizer::byte_token(static_cast<uint8_t>(b));
            !tokens.count(name))
          throw DataError(tj_path.string() + ": key \"model.vocab\": byte token \"" + name +
                          "\" is not in the vocabulary (byte fallback needs all of <0x00> ... <0xFF>)");
    }
    spec.merges = merges_from_json(member(*tj_model, "merges"), tj_path);
    out.vocab_file = tj_path.string();
  } else if (fs::exists(folder / "vocab.txt")) {
    out.vocab_file = (folder / "vocab.txt").string();
    spec.vocab = read_vocab_file(out.vocab_file);
  } else if (fs::exists(vj_path) && fs::exists(merges_path)) {
    spec.kind = text::TokenizerKind::kByteBpe;
    spec.vocab = vocab_from_ids(read_json_file(vj_path.string()), vj_path, "");
    spec.merges = read_merges_file(merges_path);
    out.vocab_file = vj_path.string();
  } else if (tj_model) {
    spec.vocab = vocab_from_ids(member(*tj_model, "vocab"), tj_path, "model.vocab");
    out.vocab_file = tj_path.string();
  } else {
    throw IoError(dir + ": no vocab.txt, tokenizer.json nor vocab.json + merges.txt (a tokenizer is needed)");
  }

  if (spec.kind == text::TokenizerKind::kUnigram) {
    // unigram_from_tokenizer_json has set all there is.
  } else if (spec.kind == text::TokenizerKind::kSentencePieceBpe) {
    // GemmaTokenizer's names, or LlamaTokenizer's where the vocabulary has <s> and no <bos>
    spec.special = in_vocabulary(spec, "<s>") && !in_vocabulary(spec, "<bos>")
                       ? text::SpecialTokens{"<s>", "</s>", "<pad>", "<unk>", "<mask>"}
                       : text::SpecialTokens{"<bos>", "<eos>", "<pad>", "<unk>", "<mask>"};
  } else if (spec.kind == text::TokenizerKind::kByteBpe) {
    spec.special = text::roberta_special_tokens();
    spec.add_prefix_space = (tc ? get_bool(*tc, "add_prefix_space", tc_path) : std::nullopt)
                                .value_or(prefix_space.value_or(false));
  } else if (const auto normalizer = tj ? tj->find("normalizer") : json::const_iterator();
             tj && normalizer != tj->end() && normalizer->is_object() &&
             string_member(*normalizer, "type") == "BertNormalizer") {
    set_normalization(spec.normalization, get_bool(*normalizer, "lowercase", tj_path),
                      get_bool(*normalizer, "strip_accents", tj_path), get_bool(*normalizer, "handle_chinese_chars", tj_path));
  } else if (tc) {
    set_normalization(spec.normalization, get_bool(*tc, "do_lower_case", tc_path), get_bool(*tc, "strip_accents", tc_path),
                      get_bool(*tc, "tokenize_chinese_chars", tc_path));
  }
  if (tc)
    if (const auto n = get_number(*tc, "model_max_length", tc_path); n && *n < kNoLimitSentinel)
      out.max_length = static_cast<int64_t>(*n);
  const fs::path sm_path = folder / "special_tokens_map.json";
  if (!(tc && read_special_tokens(*tc, tc_path, spec.special)))
    if (const auto sm = read_optional(sm_path)) read_special_tokens(*sm, sm_path, spec.special);
  if (tj && spec.kind == text::TokenizerKind::kByteBpe && spec.bpe_split != text::BpeSplit::kGpt2)
    read_byte_level_framing(*tj, tj_path, tc, tc_path, spec);
  if (tj && spec.kind == text::TokenizerKind::kSentencePieceBpe) read_bos_eos_framing(*tj, tj_path, tc, tc_path, spec);
  if (tj) read_added_tokens(*tj, tj_path, spec);
  read_token_stripping(tj, tj_path, tc, tc_path, spec);
  if (const auto sb = read_optional(sb_path)) {
    if (const auto n = get_number(*sb, "max_seq_length", sb_path)) {
      // sentence-transformers counts [CLS] and [SEP] in max_seq_length, as ragmig does.
      if (*n < 2) throw DataError(sb_path.string() + ": key \"max_seq_length\": expected at least 2");
      out.max_length = static_cast<int64_t>(*n);
    }
    if (get_bool(*sb, "do_lower_case", sb_path).value_or(false)) {
      if (spec.kind != text::TokenizerKind::kWordPiece)
        throw DataError(sb_path.string() + ": key \"do_lower_case\": true is supported for WordPiece tokenizers only");
      spec.normalization.lower_case = true;
    }
  }
  return out;
}

std::string transformer_folder(const std::string& dir, const std::optional<SentenceTransformerLayout>& layout) {
  if (!layout || layout->transformer_path.empty()) return dir;
  return (fs::path(dir) / layout->transformer_path).string();
}

void check_model_folder(const std::string& dir) {
  if (!fs::is_directory(dir)) throw InputFileError(dir + ": model folder not found");
  if (fs::is_regular_file(fs::path(dir) / kAdapterConfigFile)) return;
  const fs::path folder = transformer_folder(dir, read_sentence_transformer_layout(dir));
  // A run folder of `ragmig train` has a config.json too (the training's) and its model in model/.
  const fs::path inner = fs::path(dir) / "model";
  if (!fs::exists(folder / "model.safetensors") &&
      (fs::is_regular_file(inner / "config.json") || fs::is_regular_file(inner / kAdapterConfigFile)))
    throw InputFileError(dir + ": a training run's folder, not a model folder: its model is " + inner.string());
  if (!fs::is_regular_file(folder / "config.json"))
    throw InputFileError(dir + ": not a model folder: no " + (folder / "config.json").string() + " (expected a " +
                         "folder written by ragmig, transformers' save_pretrained or sentence-transformers' save, " +
                         "a LoRA adapter folder, or package:NAME: see `ragmig models`)");
}

std::optional<SentenceTransformerLayout> read_sentence_transformer_layout(const std::string& dir) {
  const fs::path folder(dir), modules_path = folder / "modules.json";
  const auto modules = read_optional(modules_path);
  if (!modules) return std::nullopt;
  if (!modules->is_array()) throw DataError(modules_path.string() + ": expected a JSON array of modules");
  SentenceTransformerLayout layout;
  // The modules ragmig runs, in the one order it runs them; each at most once (Normalize may repeat: a no-op).
  const std::vector<std::string> order = {"Transformer", "Pooling", "Dense", "Normalize"};
  std::ptrdiff_t last = -1;  // index into `order` of the module before
  bool transformer = false, pooling = false;
  for (const auto& m : *modules) {
    if (!m.is_object() || !m.contains("type") || !m["type"].is_string())
      throw DataError(modules_path.string() + ": every module needs a \"type\" string");
    const std::string type = m["type"].get<std::string>(), cls = module_class(type);
    if (!member(m, "path").is_null() && !member(m, "path").is_string())
      throw DataError(modules_path.string() + ": module " + type + ": key \"path\": expected a folder (a string)");
    const std::string path = string_member(m, "path");
    const std::ptrdiff_t at = std::find(order.begin(), order.end(), cls) - order.begin();
    if (at == std::ssize(order) || at < last || (at == last && cls != "Normalize" && cls != "Dense"))
      throw DataError(modules_path.string() + ": module " + type +
                      (at == std::ssize(order) ? " is not supported" : " is not supported here") +
                      " (ragmig runs a Transformer, a Pooling, Dense modules and Normalize, in that order)");
    last = at;
    if (cls == "Transformer") {
      transformer = true;
      layout.transformer_path = path;
    } else if (cls == "Pooling") {
      pooling = true;
      const fs::path pc = folder / path / "config.json";
      const json config = read_json_file(pc.string());
      layout.pooling = pooling_of(config, pc);
      if (!get_bool(config, "include_prompt", pc).value_or(true))
        throw DataError(pc.string() + ": key \"include_prompt\": false is not supported (ragmig pools over the "
                        "prompt's tokens too, as sentence-transformers does by default)");
    } else if (cls == "Dense") {
      if (!pooling) throw DataError(modules_path.string() + ": module " + type + " comes before the Pooling module");
      const fs::path dc = folder / path / "config.json";
      const DenseConfig dense = dense_config_from_json(read_json_file(dc.string()), dc.string());
      if (!layout.dense.empty() && dense.in_features != layout.dense.back().out_features)
        throw DataError(dc.string() + ": key \"in_features\": " + std::to_string(dense.in_features) +
                        ", but the Dense module before it gives " + std::to_string(layout.dense.back().out_features));
      layout.dense.push_back(dense);
      layout.dense_paths.push_back(path);
    } else {
      layout.normalize = true;
    }
  }
  if (!transformer) throw DataError(modules_path.string() + ": no Transformer module");
  if (!pooling) throw DataError(modules_path.string() + ": no Pooling module");
  return layout;
}

text::Prompts read_prompts(const std::string& dir) {
  const fs::path path = fs::path(dir) / "config_sentence_transformers.json";
  const auto config = read_optional(path);
  text::Prompts out;
  if (!config) return out;
  const auto prompts = config->find("prompts");
  if (prompts == config->end() || prompts->is_null()) return out;
  if (!prompts->is_object()) throw DataError(path.string() + ": key \"prompts\": expected an object of name: prompt");
  const auto prompt = [&](const std::string& name) -> std::string {
    const auto it = prompts->find(name);
    if (it == prompts->end() || it->is_null()) return "";
    if (!it->is_string()) throw DataError(path.string() + ": key \"prompts." + name + "\": expected a string or null");
    return it->get<std::string>();
  };
  for (const auto& item : prompts->items()) prompt(item.key());  // every value checked, used or not
  out.query = prompt("query");
  for (const char* name : {"document", "passage", "corpus"})
    if (out.passage.empty()) out.passage = prompt(name);
  return out;
}

int64_t read_truncate_dim(const std::string& dir) {
  const fs::path path = fs::path(dir) / "config_sentence_transformers.json";
  const auto config = read_optional(path);
  if (!config || !config->is_object() || !config->contains("truncate_dim")) return 0;
  const json& d = config->at("truncate_dim");
  if (d.is_null()) return 0;
  if (!d.is_number_integer() || d.get<int64_t>() <= 0)
    throw DataError(path.string() + ": key \"truncate_dim\": expected a positive integer or null, got " + d.dump());
  return d.get<int64_t>();
}

void write_prompts_file(const std::string& dir, const text::Prompts& prompts) {
  write_json(fs::path(dir) / "config_sentence_transformers.json", st_config(prompts));
}

namespace {

// The vocabulary in the files transformers reads for the tokenizer's family and class: tokenizer.json (Unigram,
// fast byte-level BPE), vocab.json + merges.txt (slow BPE), vocab.txt (WordPiece; tokenizer.json beside it for
// a fast class).
void write_vocabulary_files(const fs::path& folder, const text::TokenizerSpec& tokenizer,
                            const std::string& tokenizer_class) {
  const std::vector<std::string>& vocab = tokenizer.vocab;
  const bool fast = tokenizer_class == kFastTokenizerClass;
  if (tokenizer.kind == text::TokenizerKind::kUnigram) {
    write_json(folder / "tokenizer.json", unigram_tokenizer_json(tokenizer));
  } else if (tokenizer.kind == text::TokenizerKind::kSentencePieceBpe) {
    write_json(folder / "tokenizer.json", sentencepiece_bpe_tokenizer_json(tokenizer));
  } else if (tokenizer.kind == text::TokenizerKind::kByteBpe && fast) {
    write_json(folder / "tokenizer.json", byte_bpe_tokenizer_json(tokenizer));
  } else if (tokenizer.kind == text::TokenizerKind::kByteBpe) {
    json ids = json::object();
    for (size_t i = 0; i < vocab.size(); ++i) ids[vocab[i]] = i;
    write_json(folder / "vocab.json", ids);
    std::string merges = "#version: 0.2\n";
    for (const auto& [left, right] : tokenizer.merges) {
      if (left.find_first_of(" \r\n") != std::string::npos || right.find_first_of(" \r\n") != std::string::npos)
        throw DataError(folder.string() + ": merge \"" + left + "\" \"" + right +
                        "\" cannot be written to merges.txt (a space or line break in a half)");
      merges.append(left).append(" ").append(right).append("\n");
    }
    write_file_atomic(folder / "merges.txt", merges);
  } else {
    std::string text;
    for (const auto& token : vocab) {
      if (token.find_first_of("\r\n") != std::string::npos)
        throw DataError(folder.string() + ": vocabulary token with a line break cannot be written to vocab.txt");
      text.append(token).append("\n");
    }
    write_file_atomic(folder / "vocab.txt", text);
    if (fast) write_json(folder / "tokenizer.json", word_piece_tokenizer_json(tokenizer));  // transformers reads it
  }
}

// tokenizer_config.json and special_tokens_map.json: the special tokens, and the settings the slow tokenizers
// take from the config (lower-casing, accents, CJK, prefix space, the added tokens).
void write_tokenizer_config(const fs::path& folder, const text::TokenizerSpec& tokenizer,
                            const std::string& tokenizer_class, int64_t max_length) {
  const bool bpe = tokenizer.kind == text::TokenizerKind::kByteBpe;
  const bool unigram = tokenizer.kind == text::TokenizerKind::kUnigram;
  const text::SpecialTokens& tokens = tokenizer.special;
  json special = {
      {"unk_token", tokens.unk}, {"sep_token", tokens.sep}, {"pad_token", tokens.pad}, {"cls_token", tokens.cls}};
  const bool sp_bpe = tokenizer.kind == text::TokenizerKind::kSentencePieceBpe;
  if (sp_bpe) {  // GemmaTokenizer's names; transformers frames by add_bos_token / add_eos_token (below)
    special = {
        {"bos_token", tokens.cls}, {"eos_token", tokens.sep}, {"pad_token", tokens.pad}, {"unk_token", tokens.unk}};
  } else if (bpe && tokenizer.bpe_split != text::BpeSplit::kGpt2) {
    // Qwen's and Llama 3's: tokenizer.json's post-processor frames ($A eos, bos $A, $A); no cls or unk
    special = {{"eos_token", tokens.sep}, {"pad_token", tokens.pad}};
    if (tokenizer.cls_first) special["bos_token"] = tokens.cls;
  } else if (bpe || unigram) {  // RobertaTokenizer's and XLMRobertaTokenizer's bos and eos are their cls and sep
    special["bos_token"] = tokens.cls;
    special["eos_token"] = tokens.sep;
  }
  if (std::find(tokenizer.vocab.begin(), tokenizer.vocab.end(), tokens.mask) != tokenizer.vocab.end())
    special["mask_token"] = tokens.mask;
  json tc = special;
  tc["tokenizer_class"] = tokenizer_class;
  if (bpe) {
    tc["add_prefix_space"] = tokenizer.add_prefix_space;
  } else if (sp_bpe) {
    tc["add_bos_token"] = tokenizer.cls_first;
    tc["add_eos_token"] = tokenizer.sep_last;
  } else if (!unigram) {
    const text::TextNormalization& normalization = tokenizer.normalization;
    tc["do_lower_case"] = normalization.lower_case;
    tc["strip_accents"] =
        normalization.strip_accents == normalization.lower_case ? json() : json(normalization.strip_accents);
    tc["tokenize_chinese_chars"] = normalization.split_cjk;
    tc["do_basic_tokenize"] = true;
  }
  tc["model_max_length"] = max_length;
  // Only then: BERT's folders stay as they were.
  if (!tokenizer.lstrip.empty() || !tokenizer.rstrip.empty() || !tokenizer.added_tokens.empty() ||
      !tokenizer.normalized_added_tokens.empty()) {
    json decoder = json::object();
    for (json& token : special_added_tokens(tokenizer)) {
      const std::string id = std::to_string(token["id"].get<int64_t>());
      token.erase("id");
      decoder[id] = std::move(token);
    }
    tc["added_tokens_decoder"] = decoder;
  }
  write_json(folder / "tokenizer_config.json", tc);
  write_json(folder / "special_tokens_map.json", special);
}

// modules.json and the folders of its modules: Transformer (the top folder), Pooling, then Dense and Normalize
// where the layout has them.
void write_modules(const fs::path& folder, const SentenceTransformerLayout& layout, int64_t hidden_size) {
  json modules = json::array();
  // sentence-transformers' own naming: module i of class C in folder "i_C" (the Transformer in the top folder).
  const auto add_module = [&](const std::string& cls) {
    const std::string idx = std::to_string(modules.size());
    modules.push_back({{"idx", modules.size()},
                       {"name", idx},
                       {"path", cls == "Transformer" ? "" : idx + "_" + cls},
                       {"type", "sentence_transformers.models." + cls}});
    return modules.back()["path"].get<std::string>();
  };
  add_module("Transformer");
  add_module("Pooling");
  for (const DenseConfig& dense : layout.dense) {
    const std::string path = add_module("Dense");
    fs::create_directories(folder / path);
    write_json(folder / path / "config.json", to_json(dense));
  }
  if (layout.normalize) fs::create_directories(folder / add_module("Normalize"));
  write_json(folder / "modules.json", modules);
  fs::create_directories(folder / "1_Pooling");
  const std::string& pooling = layout.pooling;
  write_json(folder / "1_Pooling" / "config.json",
             {{"word_embedding_dimension", hidden_size},
              {"pooling_mode_cls_token", pooling == "cls"},
              {"pooling_mode_mean_tokens", pooling == "mean"},
              {"pooling_mode_max_tokens", pooling == "max"},
              {"pooling_mode_mean_sqrt_len_tokens", pooling == "mean_sqrt_len_tokens"},
              {"pooling_mode_lasttoken", pooling == "lasttoken"}});
}

}  // namespace

void write_sentence_transformer_files(const std::string& dir, const text::TokenizerSpec& tokenizer,
                                      const std::string& tokenizer_class, int64_t max_length, int64_t hidden_size,
                                      const SentenceTransformerLayout& layout, const text::Prompts& prompts,
                                      int64_t truncate_dim) {
  const fs::path folder(dir);
  write_vocabulary_files(folder, tokenizer, tokenizer_class);
  write_tokenizer_config(folder, tokenizer, tokenizer_class, max_length);
  write_json(folder / "sentence_bert_config.json", {{"max_seq_length", max_length}, {"do_lower_case", false}});
  write_modules(folder, layout, hidden_size);
  json config = st_config(prompts);
  config["similarity_fn_name"] = layout.normalize ? "cosine" : "dot";
  if (truncate_dim > 0) config["truncate_dim"] = truncate_dim;
  write_json(folder / "config_sentence_transformers.json", config);
}

}  // namespace ragmig::model
