// Tokenizer and sentence-transformers files of model folders (see st_folder.h). Readers accept what
// transformers 4-5 and sentence-transformers 2-6 write; the writer writes the classic layout that all of
// them load (checked against the real libraries by tests/hf).
#include "model/st_folder.h"

#include <algorithm>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_errors.h"
#include "model/pooling_mode.h"

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

std::optional<bool> get_bool(const json& j, const std::string& key, const fs::path& file) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) throw DataError(file.string() + ": key \"" + key + "\": expected true, false or null");
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

std::vector<std::string> vocab_from_tokenizer_json(const json& tj, const fs::path& file) {
  const auto model = tj.find("model");
  if (model == tj.end() || !model->is_object() || model->value("type", "") != "WordPiece")
    throw DataError(file.string() + ": key \"model\": expected a WordPiece (BERT) tokenizer");
  const auto vocab = model->find("vocab");
  if (vocab == model->end() || !vocab->is_object())
    throw DataError(file.string() + ": key \"model.vocab\": expected an object of token: id");
  std::vector<std::string> tokens(vocab->size());
  std::vector<bool> seen(vocab->size(), false);
  for (const auto& [token, id] : vocab->items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<uint64_t>() >= tokens.size() ||
        seen[id.get<size_t>()])
      throw DataError(file.string() + ": key \"model.vocab\": token \"" + token + "\" has id " + id.dump() +
                      " (expected each of 0.." + std::to_string(tokens.size() - 1) + " once)");
    seen[id.get<size_t>()] = true;
    tokens[id.get<size_t>()] = token;
  }
  return tokens;
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
  std::string list;
  for (const auto& k : on) list += (list.empty() ? "" : ", ") + k;
  throw DataError(file.string() + ": pooling " + (list.empty() ? "none" : list) +
                  " is not supported (ragmig pools with one of pooling_mode_mean_tokens, pooling_mode_cls_token,"
                  " pooling_mode_max_tokens, pooling_mode_mean_sqrt_len_tokens)");
}

void write_json(const fs::path& path, const json& j) { write_file_atomic(path, j.dump(2) + "\n"); }

// The names sentence-transformers' encode_query and encode_document look up first.
json prompts_json(const text::Prompts& prompts) { return {{"query", prompts.query}, {"document", prompts.passage}}; }

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
  const fs::path tj_path = folder / "tokenizer.json", tc_path = folder / "tokenizer_config.json",
                 sb_path = folder / "sentence_bert_config.json";
  const auto tj = read_optional(tj_path);
  const auto tc = read_optional(tc_path);
  if (fs::exists(folder / "vocab.txt")) out.vocab = read_vocab_file((folder / "vocab.txt").string());
  else if (tj) out.vocab = vocab_from_tokenizer_json(*tj, tj_path);
  else throw IoError(dir + ": no vocab.txt nor tokenizer.json (a BERT WordPiece vocabulary is needed)");

  const auto normalizer = tj ? tj->find("normalizer") : json::const_iterator();
  if (tj && normalizer != tj->end() && normalizer->is_object() && normalizer->value("type", "") == "BertNormalizer") {
    set_normalization(out.normalization, get_bool(*normalizer, "lowercase", tj_path),
                      get_bool(*normalizer, "strip_accents", tj_path), get_bool(*normalizer, "handle_chinese_chars", tj_path));
  } else if (tc) {
    set_normalization(out.normalization, get_bool(*tc, "do_lower_case", tc_path), get_bool(*tc, "strip_accents", tc_path),
                      get_bool(*tc, "tokenize_chinese_chars", tc_path));
  }
  if (tc)
    if (const auto n = get_number(*tc, "model_max_length", tc_path); n && *n < kNoLimitSentinel)
      out.max_length = static_cast<int64_t>(*n);
  const fs::path sm_path = folder / "special_tokens_map.json";
  if (!(tc && read_special_tokens(*tc, tc_path, out.special)))
    if (const auto sm = read_optional(sm_path)) read_special_tokens(*sm, sm_path, out.special);
  if (const auto sb = read_optional(sb_path)) {
    if (const auto n = get_number(*sb, "max_seq_length", sb_path)) {
      // sentence-transformers counts [CLS] and [SEP] in max_seq_length, as ragmig does.
      if (*n < 2) throw DataError(sb_path.string() + ": key \"max_seq_length\": expected at least 2");
      out.max_length = static_cast<int64_t>(*n);
    }
    if (get_bool(*sb, "do_lower_case", sb_path).value_or(false)) out.normalization.lower_case = true;
  }
  return out;
}

std::optional<SentenceTransformerLayout> read_sentence_transformer_layout(const std::string& dir) {
  const fs::path folder(dir), modules_path = folder / "modules.json";
  const auto modules = read_optional(modules_path);
  if (!modules) return std::nullopt;
  if (!modules->is_array()) throw DataError(modules_path.string() + ": expected a JSON array of modules");
  SentenceTransformerLayout layout;
  bool transformer = false, pooling = false;
  for (const auto& m : *modules) {
    if (!m.is_object() || !m.contains("type") || !m["type"].is_string())
      throw DataError(modules_path.string() + ": every module needs a \"type\" string");
    const std::string type = m["type"].get<std::string>(), cls = module_class(type);
    const std::string path = m.value("path", "");
    if (cls == "Transformer" && !transformer) {
      transformer = true;
      layout.transformer_path = path;
    } else if (cls == "Pooling" && !pooling) {
      pooling = true;
      const fs::path pc = folder / path / "config.json";
      const json config = read_json_file(pc.string());
      layout.pooling = pooling_of(config, pc);
      if (!get_bool(config, "include_prompt", pc).value_or(true))
        throw DataError(pc.string() + ": key \"include_prompt\": false is not supported (ragmig pools over the "
                        "prompt's tokens too, as sentence-transformers does by default)");
    } else if (cls == "Normalize") {
      layout.normalize = true;
    } else {
      throw DataError(modules_path.string() + ": module " + type +
                      " is not supported (ragmig runs Transformer, Pooling and Normalize)");
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

void write_prompts_file(const std::string& dir, const text::Prompts& prompts) {
  write_json(fs::path(dir) / "config_sentence_transformers.json",
             {{"prompts", prompts_json(prompts)}, {"default_prompt_name", nullptr}});
}

void write_sentence_transformer_files(const std::string& dir, const std::vector<std::string>& vocab,
                                      const text::TextNormalization& normalization, const text::SpecialTokens& tokens,
                                      const std::string& tokenizer_class, int64_t max_length, int64_t hidden_size,
                                      const std::string& pooling, bool normalize, const text::Prompts& prompts) {
  const fs::path folder(dir);
  const auto has = [&](const std::string& t) { return std::find(vocab.begin(), vocab.end(), t) != vocab.end(); };
  json special = {
      {"unk_token", tokens.unk}, {"sep_token", tokens.sep}, {"pad_token", tokens.pad}, {"cls_token", tokens.cls}};
  if (has(tokens.mask)) special["mask_token"] = tokens.mask;
  json tc = special;
  tc["tokenizer_class"] = tokenizer_class;
  tc["do_lower_case"] = normalization.lower_case;
  tc["strip_accents"] = normalization.strip_accents == normalization.lower_case ? json() : json(normalization.strip_accents);
  tc["tokenize_chinese_chars"] = normalization.split_cjk;
  tc["do_basic_tokenize"] = true;
  tc["model_max_length"] = max_length;
  write_json(folder / "tokenizer_config.json", tc);
  write_json(folder / "special_tokens_map.json", special);
  write_json(folder / "sentence_bert_config.json", {{"max_seq_length", max_length}, {"do_lower_case", false}});

  json modules = json::array({
      {{"idx", 0}, {"name", "0"}, {"path", ""}, {"type", "sentence_transformers.models.Transformer"}},
      {{"idx", 1}, {"name", "1"}, {"path", "1_Pooling"}, {"type", "sentence_transformers.models.Pooling"}},
  });
  if (normalize)
    modules.push_back({{"idx", 2}, {"name", "2"}, {"path", "2_Normalize"}, {"type", "sentence_transformers.models.Normalize"}});
  write_json(folder / "modules.json", modules);
  fs::create_directories(folder / "1_Pooling");
  write_json(folder / "1_Pooling" / "config.json",
             {{"word_embedding_dimension", hidden_size},
              {"pooling_mode_cls_token", pooling == "cls"},
              {"pooling_mode_mean_tokens", pooling == "mean"},
              {"pooling_mode_max_tokens", pooling == "max"},
              {"pooling_mode_mean_sqrt_len_tokens", pooling == "mean_sqrt_len_tokens"}});
  if (normalize) fs::create_directories(folder / "2_Normalize");
  write_json(folder / "config_sentence_transformers.json",
             {{"prompts", prompts_json(prompts)},
              {"default_prompt_name", nullptr},
              {"similarity_fn_name", normalize ? "cosine" : "dot"}});
}

}  // namespace ragmig::model
