#include "model/tokenizer_json.h"

#include <algorithm>

#include "model/unigram_json.h"

namespace ragmig::model {

using json = nlohmann::json;

int64_t token_id(const text::TokenizerSpec& spec, const std::string& token) {
  for (size_t i = 0; i < spec.vocab.size(); ++i)
    if (spec.vocab[i] == token) return static_cast<int64_t>(i);
  return -1;
}

std::string split_pattern(text::BpeSplit split) {
  switch (split) {
    case text::BpeSplit::kGpt2:
      return "";
    case text::BpeSplit::kQwen2:
      return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
             "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    case text::BpeSplit::kLlama3:
      return "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
             "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  }
  return "";
}

json special_added_tokens(const text::TokenizerSpec& spec) {
  std::vector<std::pair<int64_t, json>> added;  // by id, as the tokenizers library lists them
  const auto add = [&](const std::string& token, bool special, bool normalized) {
    if (const int64_t id = token_id(spec, token); id >= 0)
      added.emplace_back(id, json{{"id", id}, {"content", token}, {"single_word", false},
                                  {"lstrip", spec.strips_left(token)}, {"rstrip", spec.strips_right(token)},
                                  {"normalized", normalized}, {"special", special}});
  };
  for (const std::string* token : {&spec.special.cls, &spec.special.pad, &spec.special.sep, &spec.special.unk,
                                   &spec.special.mask})
    add(*token, true, false);
  for (const std::string& token : spec.added_tokens) add(token, true, false);
  for (const std::string& token : spec.normalized_added_tokens) add(token, false, true);
  std::stable_sort(added.begin(), added.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  json out = json::array();
  for (auto& [id, token] : added) out.push_back(std::move(token));
  return out;
}

json template_post_processor(const text::TokenizerSpec& spec, bool double_sep) {
  const auto special = [](const std::string& token) { return json{{"SpecialToken", {{"id", token}, {"type_id", 0}}}}; };
  const auto sequence = [](const char* id) { return json{{"Sequence", {{"id", id}, {"type_id", 0}}}}; };
  const std::string& cls = spec.special.cls;
  const std::string& sep = spec.special.sep;
  json single = json::array(), pair = json::array(), tokens = json::object();
  if (spec.cls_first) {
    single.push_back(special(cls));
    tokens[cls] = {{"id", cls}, {"ids", {token_id(spec, cls)}}, {"tokens", {cls}}};
  }
  single.push_back(sequence("A"));
  if (spec.sep_last) {
    single.push_back(special(sep));
    tokens[sep] = {{"id", sep}, {"ids", {token_id(spec, sep)}}, {"tokens", {sep}}};
  }
  pair = single;
  if (double_sep && spec.sep_last) pair.push_back(special(sep));
  pair.push_back(sequence("B"));
  if (spec.sep_last) pair.push_back(special(sep));
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", tokens}};
}

json byte_bpe_tokenizer_json(const text::TokenizerSpec& spec) {
  json vocab = json::object();
  for (size_t i = 0; i < spec.vocab.size(); ++i) vocab[spec.vocab[i]] = i;
  json merges = json::array();
  // "left right", as every tokenizers version reads them; [left, right] (0.20 on) where a half has a space.
  for (const auto& [left, right] : spec.merges)
    merges.push_back(left.find(' ') == std::string::npos && right.find(' ') == std::string::npos
                         ? json(left + " " + right)
                         : json::array({left, right}));
  const bool gpt2 = spec.bpe_split == text::BpeSplit::kGpt2;
  const json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", spec.add_prefix_space}, {"trim_offsets", true}, {"use_regex", gpt2}};
  const json split = {{"type", "Split"},
                      {"pattern", {{"Regex", split_pattern(spec.bpe_split)}}},
                      {"behavior", "Isolated"},
                      {"invert", false}};
  const json pre_tokenizer =
      gpt2 ? byte_level : json{{"type", "Sequence"}, {"pretokenizers", json::array({split, byte_level})}};
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", special_added_tokens(spec)},
          {"normalizer", spec.normalizer.empty() ? json(nullptr) : json{{"type", "NFC"}}},
          {"pre_tokenizer", pre_tokenizer},
          {"post_processor", template_post_processor(spec, false)},
          {"decoder", byte_level},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", nullptr},
            {"continuing_subword_prefix", nullptr},
            {"end_of_word_suffix", nullptr},
            {"fuse_unk", false},
            {"byte_fallback", false},
            {"ignore_merges", false},
            {"vocab", vocab},
            {"merges", merges}}}};
}

json sentencepiece_bpe_tokenizer_json(const text::TokenizerSpec& spec) {
  json vocab = json::object();
  for (size_t i = 0; i < spec.vocab.size(); ++i) vocab[spec.vocab[i]] = i;
  json merges = json::array();
  for (const auto& [left, right] : spec.merges) merges.push_back(json::array({left, right}));  // halves may hold " "
  const bool replaces_spaces = std::any_of(spec.normalizer.begin(), spec.normalizer.end(), [](const auto& step) {
    return step.kind == text::NormalizerStep::Kind::kReplace && step.text == " ";
  });
  const json split = {
      {"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"}, {"invert", false}};
  json decoders = json::array({{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                               {{"type", "ByteFallback"}},
                               {{"type", "Fuse"}}});
  const bool prepends = spec.has_step(text::NormalizerStep::Kind::kPrepend) ||
                        (spec.metaspace && spec.pre_tokenizer.prepend != text::MetaspaceSplit::Prepend::kNever);
  if (prepends) decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", special_added_tokens(spec)},
          {"normalizer", normalizer_json(spec.normalizer)},
          {"pre_tokenizer", spec.metaspace    ? metaspace_json(spec.pre_tokenizer)
                            : replaces_spaces ? split
                                              : json(nullptr)},
          {"post_processor", template_post_processor(spec, false)},
          {"decoder", {{"type", "Sequence"}, {"decoders", decoders}}},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", spec.special.unk},
            {"continuing_subword_prefix", nullptr},
            {"end_of_word_suffix", nullptr},
            {"fuse_unk", true},
            {"byte_fallback", true},
            {"ignore_merges", false},
            {"vocab", vocab},
            {"merges", merges}}}};
}

json word_piece_tokenizer_json(const text::TokenizerSpec& spec) {
  json vocab = json::object();
  for (size_t i = 0; i < spec.vocab.size(); ++i) vocab[spec.vocab[i]] = i;
  const text::TextNormalization& n = spec.normalization;
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", special_added_tokens(spec)},
          {"normalizer",
           {{"type", "BertNormalizer"},
            {"clean_text", true},
            {"handle_chinese_chars", n.split_cjk},
            {"strip_accents", n.strip_accents == n.lower_case ? json(nullptr) : json(n.strip_accents)},
            {"lowercase", n.lower_case}}},
          {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
          {"post_processor", template_post_processor(spec, false)},
          {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
          {"model",
           {{"type", "WordPiece"},
            {"unk_token", spec.special.unk},
            {"continuing_subword_prefix", "##"},
            {"max_input_chars_per_word", 100},
            {"vocab", vocab}}}};
}

}  // namespace ragmig::model
