#include "model/unigram_json.h"

#include "core/base64.h"
#include "core/error.h"
#include "model/json_member.h"
#include "model/tokenizer_json.h"

using nlohmann::json;

namespace ragmig::model {
namespace {

using text::MetaspaceSplit;
using text::NormalizerStep;

[[noreturn]] void refuse(const std::string& file, const std::string& key, const std::string& what) {
  throw DataError(file + ": key \"" + key + "\": " + what);
}

std::string string_key(const json& j, const char* key, const std::string& file, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) refuse(file, where + "." + key, "expected a string");
  return it->get<std::string>();
}

bool bool_key(const json& j, const char* key, bool fallback, const std::string& file, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) refuse(file, where + "." + key, "expected true or false");
  return it->get<bool>();
}

NormalizerStep normalizer_step(const json& n, const std::string& file, const std::string& where) {
  const std::string type = string_member(n, "type");
  NormalizerStep step;
  if (type == "Precompiled") {
    step.kind = NormalizerStep::Kind::kPrecompiled;
    const auto decoded = base64_decode(string_key(n, "precompiled_charsmap", file, where));
    if (!decoded) refuse(file, where + ".precompiled_charsmap", "not base64");
    step.text = *decoded;
  } else if (type == "Replace") {
    const auto pattern = n.find("pattern");
    step.content = string_key(n, "content", file, where);
    if (pattern != n.end() && pattern->is_object() && pattern->contains("String")) {
      step.kind = NormalizerStep::Kind::kReplace;
      step.text = string_key(*pattern, "String", file, where + ".pattern");
    } else if (pattern != n.end() && string_member(*pattern, "Regex") == " {2,}") {
      step.kind = NormalizerStep::Kind::kReplaceSpaceRuns;
    } else {
      refuse(file, where + ".pattern",
             "expected {\"String\": ...} or {\"Regex\": \" {2,}\"} (the only regex ragmig runs)");
    }
  } else if (type == "Strip") {
    step.kind = NormalizerStep::Kind::kStrip;
    step.left = bool_key(n, "strip_left", false, file, where);
    step.right = bool_key(n, "strip_right", false, file, where);
  } else if (type == "NFC") {
    step.kind = NormalizerStep::Kind::kNfc;
  } else if (type == "Prepend") {
    step.kind = NormalizerStep::Kind::kPrepend;
    step.content = string_key(n, "prepend", file, where);
  } else {
    refuse(file, where,
           "normalizer " + (type.empty() ? n.dump() : type) +
               " is not supported (ragmig runs Precompiled, Replace, Strip, NFC and Prepend, alone or in "
               "a Sequence)");
  }
  return step;
}

MetaspaceSplit pre_tokenizer(const json& tj, const std::string& file) {
  const auto pre = tj.find("pre_tokenizer");
  const json* metaspace = pre != tj.end() ? &*pre : nullptr;
  bool whitespace_split = false;
  if (metaspace && string_member(*metaspace, "type") == "Sequence") {
    const auto list = metaspace->find("pretokenizers");
    if (!(list != metaspace->end() && list->is_array() && list->size() == 2 && (*list)[0].is_object() &&
          string_member((*list)[0], "type") == "WhitespaceSplit"))
      refuse(file, "pre_tokenizer", "expected Metaspace, or a Sequence of WhitespaceSplit and Metaspace");
    whitespace_split = true;
    metaspace = &(*list)[1];
  }
  if (!metaspace || string_member(*metaspace, "type") != "Metaspace")
    refuse(file, "pre_tokenizer", "expected Metaspace, or a Sequence of WhitespaceSplit and Metaspace");
  MetaspaceSplit m = metaspace_from_json(*metaspace, file, "pre_tokenizer");
  m.whitespace_split = whitespace_split;
  return m;
}

const char* prepend_name(MetaspaceSplit::Prepend p) {
  switch (p) {
    case MetaspaceSplit::Prepend::kAlways: return "always";
    case MetaspaceSplit::Prepend::kFirst: return "first";
    case MetaspaceSplit::Prepend::kNever: return "never";
  }
  return "always";
}

json step_json(const NormalizerStep& step) {
  switch (step.kind) {
    case NormalizerStep::Kind::kPrecompiled:
      return {{"type", "Precompiled"}, {"precompiled_charsmap", base64_encode(step.text.data(), step.text.size())}};
    case NormalizerStep::Kind::kReplace:
      return {{"type", "Replace"}, {"pattern", {{"String", step.text}}}, {"content", step.content}};
    case NormalizerStep::Kind::kReplaceSpaceRuns:
      return {{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", step.content}};
    case NormalizerStep::Kind::kStrip:
      return {{"type", "Strip"}, {"strip_left", step.left}, {"strip_right", step.right}};
    case NormalizerStep::Kind::kNfc:
      return {{"type", "NFC"}};
    case NormalizerStep::Kind::kPrepend:
      return {{"type", "Prepend"}, {"prepend", step.content}};
  }
  return nullptr;
}

}  // namespace

MetaspaceSplit metaspace_from_json(const json& metaspace, const std::string& file, const std::string& where) {
  MetaspaceSplit m;
  m.replacement = string_key(metaspace, "replacement", file, where);
  m.split = bool_key(metaspace, "split", true, file, where);
  if (const auto scheme = metaspace.find("prepend_scheme"); scheme != metaspace.end() && !scheme->is_null()) {
    const std::string s = scheme->is_string() ? scheme->get<std::string>() : "";
    if (s == "always")
      m.prepend = MetaspaceSplit::Prepend::kAlways;
    else if (s == "first")
      m.prepend = MetaspaceSplit::Prepend::kFirst;
    else if (s == "never")
      m.prepend = MetaspaceSplit::Prepend::kNever;
    else
      refuse(file, where + ".prepend_scheme", "expected \"always\", \"first\" or \"never\", got " + scheme->dump());
  } else {  // tokenizers before 0.15: add_prefix_space
    m.prepend = bool_key(metaspace, "add_prefix_space", true, file, where) ? MetaspaceSplit::Prepend::kAlways
                                                                           : MetaspaceSplit::Prepend::kNever;
  }
  return m;
}

json metaspace_json(const MetaspaceSplit& m) {
  return {{"type", "Metaspace"},
          {"replacement", m.replacement},
          {"prepend_scheme", prepend_name(m.prepend)},
          {"split", m.split}};
}

std::vector<NormalizerStep> normalizer_from_json(const json& tj, const std::string& file) {
  std::vector<NormalizerStep> steps;
  const auto n = tj.find("normalizer");
  if (n == tj.end() || n->is_null()) return steps;
  if (string_member(*n, "type") == "Sequence") {
    const auto list = n->find("normalizers");
    if (list == n->end() || !list->is_array()) refuse(file, "normalizer.normalizers", "expected an array");
    for (size_t i = 0; i < list->size(); ++i)
      steps.push_back(normalizer_step((*list)[i], file, "normalizer.normalizers[" + std::to_string(i) + "]"));
  } else {
    steps.push_back(normalizer_step(*n, file, "normalizer"));
  }
  return steps;
}

json normalizer_json(const std::vector<NormalizerStep>& steps) {
  if (steps.empty()) return nullptr;
  json normalizer = {{"type", "Sequence"}, {"normalizers", json::array()}};
  for (const NormalizerStep& step : steps) normalizer["normalizers"].push_back(step_json(step));
  return normalizer;
}

text::TokenizerSpec unigram_from_tokenizer_json(const json& tj, const std::string& file) {
  text::TokenizerSpec spec;
  spec.kind = text::TokenizerKind::kUnigram;
  spec.special = text::roberta_special_tokens();
  const json& model = tj.at("model");
  if (bool_key(model, "byte_fallback", false, file, "model"))
    refuse(file, "model.byte_fallback", "true is not supported");
  const auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_array()) refuse(file, "model.vocab", "expected an array of [piece, score]");
  for (size_t i = 0; i < vocab->size(); ++i) {
    const json& entry = (*vocab)[i];
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
      refuse(file, "model.vocab[" + std::to_string(i) + "]", "expected [piece, score], got " + entry.dump());
    spec.vocab.push_back(entry[0].get<std::string>());
    spec.scores.push_back(entry[1].get<double>());
  }
  // Added tokens past the model's vocabulary (XLM-R's <mask>) take the ids that follow it.
  if (const auto added = tj.find("added_tokens"); added != tj.end() && added->is_array()) {
    std::map<int64_t, std::string> extra;
    for (const json& t : *added)
      if (t.is_object() && t.contains("id") && t["id"].is_number_integer() && t.contains("content") &&
          t["content"].is_string() && t["id"].get<int64_t>() >= static_cast<int64_t>(spec.vocab.size()))
        extra.emplace(t["id"].get<int64_t>(), t["content"].get<std::string>());
    for (const auto& [id, content] : extra) {
      if (id != static_cast<int64_t>(spec.vocab.size()))
        refuse(file, "added_tokens", "token \"" + content + "\" has id " + std::to_string(id) + ", expected " +
                                       std::to_string(spec.vocab.size()) + " (ids must follow the vocabulary's)");
      spec.vocab.push_back(content);
      spec.scores.push_back(0.0);
    }
  }
  spec.normalizer = normalizer_from_json(tj, file);
  spec.pre_tokenizer = pre_tokenizer(tj, file);
  return spec;
}

json unigram_tokenizer_json(const text::TokenizerSpec& spec) {
  json vocab = json::array();
  for (size_t i = 0; i < spec.vocab.size(); ++i) vocab.push_back({spec.vocab[i], spec.scores[i]});
  const json normalizer = normalizer_json(spec.normalizer);
  const MetaspaceSplit& m = spec.pre_tokenizer;
  const json metaspace = metaspace_json(m);
  const json pre = m.whitespace_split ? json{{"type", "Sequence"},
                                             {"pretokenizers", json::array({{{"type", "WhitespaceSplit"}}, metaspace})}}
                                      : metaspace;
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", special_added_tokens(spec)},
          {"normalizer", normalizer},
          {"pre_tokenizer", pre},
          {"post_processor", template_post_processor(spec, true)},
          {"decoder", metaspace},
          {"model",
           {{"type", "Unigram"},
            {"unk_id", token_id(spec, spec.special.unk)},
            {"vocab", vocab},
            {"byte_fallback", false}}}};
}

}  // namespace ragmig::model
