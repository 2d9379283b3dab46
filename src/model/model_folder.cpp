// Saving and loading model folders. Loading is strict about tensors (every parameter must come from the
// file with its exact shape) because a silently half-loaded encoder trains and evaluates, just badly.
#include "model/model_folder.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

#include "model/lora.h"
#include "model/packaged_models.h"
#include "model/tensor_names.h"
#include "model/tokenizer_json.h"

#include "core/atomic_file.h"
#include "core/error.h"

namespace fs = std::filesystem;

namespace ragmig::model {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The tokenizer class transformers builds for the folder.
const char* tokenizer_class(const text::TokenizerSpec& tokenizer, const BertConfig& config) {
  // RobertaTokenizer's vocab.json + merges.txt have no place for a normaliser: tokenizer.json alone then.
  if (tokenizer.kind == text::TokenizerKind::kByteBpe)
    return config.rotary() || !tokenizer.normalizer.empty() || tokenizer.bpe_split != text::BpeSplit::kGpt2
               ? kFastTokenizerClass
               : "RobertaTokenizer";
  if (tokenizer.kind == text::TokenizerKind::kUnigram) return "XLMRobertaTokenizer";
  // transformers 5's GemmaTokenizer runs Gemma's normaliser whatever tokenizer.json says: Llama's and Mistral's
  // pipelines (a Metaspace, a Prepend) go by the file's class.
  if (tokenizer.kind == text::TokenizerKind::kSentencePieceBpe)
    return tokenizer.metaspace || tokenizer.has_step(text::NormalizerStep::Kind::kPrepend) ? kFastTokenizerClass
                                                                                           : "GemmaTokenizer";
  // transformers 5 builds ModernBERT's tokenizer from tokenizer.json whatever tokenizer_class says.
  if (config.is_modernbert()) return kFastTokenizerClass;
  return config.mpnet() ? "MPNetTokenizer" : "BertTokenizer";
}

void write_tower(const fs::path& folder, BertModel& tower, const std::vector<Dense>& dense,
                 const text::TokenizerSpec& tokenizer, const EncoderSpec& spec, const SaveOptions& options) {
  nlohmann::json config = to_json(tower->config());
  if (tower->config().is_modernbert())  // ModernBertConfig's defaults are ModernBERT-base's vocabulary's ids
    for (const auto& [key, token] :
         {std::pair{"cls_token_id", &tokenizer.special.cls}, {"bos_token_id", &tokenizer.special.cls},
          {"sep_token_id", &tokenizer.special.sep}, {"eos_token_id", &tokenizer.special.sep}})
      if (const int64_t id = token_id(tokenizer, *token); id >= 0) config[key] = id;
  write_file_atomic(folder / "config.json", config.dump(2) + "\n");
  std::map<std::string, torch::Tensor> state;
  for (auto& [name, tensor] : bert_state(tower))
    state.emplace(hf_tensor_name(tower->config().model_type, name), std::move(tensor));
  auto file = to_safetensors(state);
  file.metadata["format"] = "pt";  // what HF's loaders look for to treat the file as PyTorch weights
  write_safetensors((folder / "model.safetensors").string(), file);
  const int64_t max_length = options.max_length > 0 ? options.max_length : spec.bert.max_tokens();
  SentenceTransformerLayout layout;
  layout.pooling = to_string(spec.pooling);
  layout.dense = spec.dense;
  layout.normalize = spec.normalize;
  write_sentence_transformer_files(folder.string(), tokenizer, tokenizer_class(tokenizer, spec.bert), max_length,
                                   spec.bert.hidden_size, layout, options.prompts, options.sizes.truncate_dim);
  for (size_t i = 0; i < dense.size(); ++i) {
    Dense layer = dense[i];
    save_tensors((folder / dense_module_folder(i) / "model.safetensors").string(), dense_state(layer),
                 {{"format", "pt"}});
  }
}

BertConfig read_config(const fs::path& folder) {
  auto path = folder / "config.json";
  return bert_config_from_json(read_json_file(path.string()), path.string());
}

// A config that promises more weights than `weights` can hold is refused before anything is allocated for it: at
// 2 bytes a weight (fp16 / bf16, the narrowest ragmig reads), the file must hold at least `count` of them.
void check_weights_fit(double count, const fs::path& weights, const fs::path& config) {
  std::error_code ec;
  const auto bytes = fs::file_size(weights, ec);
  if (ec) throw InputFileError(weights.string() + ": cannot open for reading (" + ec.message() + ")");
  if (2 * count > static_cast<double>(bytes))
    throw DataError(fmt::format("{}: its sizes make at least {:.4g} weights, but {} holds {} bytes: the config and "
                                "the weights do not belong together", config.string(), count, weights.string(), bytes));
}

// Returns false when there is no ragmig.json.
bool read_ragmig_json(const fs::path& path, EncoderSpec& spec) {
  if (!fs::exists(path)) return false;
  auto j = read_json_file(path.string());
  const std::string source = path.string();
  if (!j.is_object()) throw DataError(source + ": expected a JSON object");
  auto fail = [&](const std::string& key, const std::string& msg) {
    throw DataError(source + ": key \"" + key + "\": " + msg);
  };
  if (auto it = j.find("format_version"); it != j.end()) {
    if (!it->is_number_integer()) fail("format_version", "expected an integer");
    if (it->get<int64_t>() > kModelFolderFormatVersion)
      fail("format_version", "version " + it->dump() + " is newer than this ragmig reads (" +
                                 std::to_string(kModelFolderFormatVersion) + ")");
  }
  if (auto it = j.find("pooling"); it != j.end()) {
    if (!it->is_string()) fail("pooling", "expected a string");
    try {
      spec.pooling = parse_pooling(it->get<std::string>());
    } catch (const DataError& e) {
      fail("pooling", e.what());
    }
  }
  if (auto it = j.find("normalize"); it != j.end()) {
    if (!it->is_boolean()) fail("normalize", "expected true or false");
    spec.normalize = it->get<bool>();
  }
  if (auto it = j.find("shared_towers"); it != j.end()) {
    if (!it->is_boolean()) fail("shared_towers", "expected true or false");
    spec.shared_towers = it->get<bool>();
  }
  return true;
}

// A Dense module's weights: model.safetensors, as sentence-transformers saves them (safe_serialization, its
// default; older releases wrote pytorch_model.bin).
std::string dense_weights_file(const fs::path& folder) {
  const fs::path file = folder / "model.safetensors";
  if (!fs::exists(file) && fs::exists(folder / "pytorch_model.bin"))
    throw DataError((folder / "pytorch_model.bin").string() + ": a pickled PyTorch file, which ragmig does not read; "
                    "save the model once with sentence-transformers (safe_serialization, its default) to write "
                    "model.safetensors beside it");
  return file.string();
}

void check_vocab_fits(const std::vector<std::string>& vocab, const BertConfig& config, const std::string& where) {
  // HF allows vocab_size > the vocabulary (rows reserved for added tokens), never fewer rows than tokens.
  if (static_cast<int64_t>(vocab.size()) > config.vocab_size)
    throw DataError("vocabulary and model mismatch: " + where + " has " + std::to_string(vocab.size()) +
                    " tokens but the model's vocab_size is " + std::to_string(config.vocab_size));
}

// "a BERT", "an MPNet", ... encoder, for messages.
std::string family_name(const BertConfig& config) {
  if (config.mpnet()) return "an MPNet";
  if (config.is_modernbert()) return "a ModernBERT";
  if (config.is_decoder()) {
    const std::string& type = config.model_type;
    return type == "qwen3" ? "a Qwen3" : type == "qwen2" ? "a Qwen2" : type == "llama" ? "a Llama" : "a Mistral";
  }
  if (config.is_gemma3()) return "a Gemma 3";
  return "a BERT";
}

}  // namespace

std::map<std::string, torch::Tensor> bert_state(BertModel& tower) {
  std::map<std::string, torch::Tensor> state;
  for (const auto& p : tower->named_parameters())
    if (!is_lora_parameter(p.key())) state.emplace(p.key(), p.value().detach().to(torch::kCPU, torch::kFloat).contiguous());
  return state;
}

void load_bert_weights(BertModel& tower, const std::string& path) {
  SafetensorsFile file = read_safetensors(path);
  // An encoder inside a task model (BertForX, MPNetForX, ...) carries its model's prefix; the heads beside it
  // (cls.*, classifier.*, lm_head.*, ...) are ignored.
  std::string prefix;
  bool distil = false;
  for (const auto& [name, raw] : file.tensors) {
    if (const std::string p = hf_model_prefix(name); !p.empty()) prefix = p;
    if (starts_with(name, "transformer.layer.") || starts_with(name, "distilbert.transformer.layer.")) distil = true;
  }

  auto params = tower->named_parameters();
  std::set<std::string> loaded;
  torch::NoGradGuard no_grad;
  for (const auto& [stored_name, raw] : file.tensors) {
    if (!starts_with(stored_name, prefix)) continue;  // a task head
    const std::string name =
        ragmig_tensor_name(distil ? "distilbert" : tower->config().model_type, stored_name.substr(prefix.size()));
    if (starts_with(name, "pooler.") || name == "embeddings.position_ids") continue;
    auto* target = params.find(name);
    if (!target)
      throw DataError(path + ": unexpected tensor \"" + stored_name + "\" (not a parameter of " +
                      family_name(tower->config()) + " encoder with this config)");
    if ((name == "embeddings.word_embeddings.weight" || name == "embeddings.tok_embeddings.weight" ||
         name == "embed_tokens.weight") &&
        !raw.shape.empty() && raw.shape[0] != tower->config().vocab_size)
      throw DataError("vocabulary and model mismatch: " + path + ": tensor \"" + stored_name + "\" has " +
                      std::to_string(raw.shape[0]) + " rows but config vocab_size is " +
                      std::to_string(tower->config().vocab_size));
    copy_weight(*target, raw, path + ": tensor \"" + stored_name + "\"");
    loaded.insert(name);
  }
  // DistilBERT has no token types: BERT's token-type embeddings of zero compute what it does.
  if (const std::string types = "embeddings.token_type_embeddings.weight"; distil && !loaded.count(types)) {
    params[types].zero_();
    loaded.insert(types);
  }
  std::string missing;
  int n_missing = 0;
  for (const auto& p : params) {
    if (loaded.count(p.key()) || is_lora_parameter(p.key())) continue;
    if (n_missing++ < 5)
      missing += (missing.empty() ? "\"" : ", \"") + hf_tensor_name(tower->config().model_type, p.key()) + "\"";
  }
  if (n_missing > 0)
    throw DataError(path + ": " + std::to_string(n_missing) + " tensor(s) missing, e.g. " + missing +
                    (prefix.empty() ? "" : " (after removing the \"" + prefix + "\" prefix)"));
}

void save_model_folder(const std::string& dir, DualEncoder& model, const text::TokenizerSpec& tokenizer,
                       const SaveOptions& options) {
  const EncoderSpec& spec = model->spec();
  check_vocab_fits(tokenizer.vocab, spec.bert, "the vocabulary to save");

  write_folder_atomically(dir, [&](const std::string& folder) {
    const fs::path tmp(folder);
    BertModel query = model->query_tower();
    write_tower(tmp, query, model->query_dense(), tokenizer, spec, options);
    if (!spec.shared_towers) {
      fs::create_directory(tmp / "passage");
      BertModel passage = model->passage_tower();
      write_tower(tmp / "passage", passage, model->passage_dense(), tokenizer, spec, options);
      fsync_folder(tmp / "passage");
    }
    nlohmann::json info = {{"pooling", to_string(spec.pooling)},
                           {"normalize", spec.normalize},
                           {"shared_towers", spec.shared_towers},
                           {"format_version", kModelFolderFormatVersion}};
    if (options.training) info["training"] = to_json(*options.training);
    if (!options.sizes.matryoshka_dims.empty()) info["matryoshka_dims"] = options.sizes.matryoshka_dims;
    write_file_atomic(tmp / "ragmig.json", info.dump(2) + "\n");
  });
}

SaveOptions save_options_of(const LoadedModel& loaded) {
  SaveOptions options;
  options.max_length = loaded.max_length;
  options.prompts = loaded.prompts;
  options.sizes = loaded.sizes;
  return options;
}

text::Prompts folder_prompts(const std::string& dir) {
  if (!is_adapter_folder(dir)) return read_prompts(dir);
  if (auto own = adapter_prompts(dir)) return *own;
  return read_prompts(resolve_model_reference(adapter_base(dir)));
}

EmbeddingSizes folder_embedding_sizes(const std::string& dir) {
  const std::string st_folder = is_adapter_folder(dir) ? resolve_model_reference(adapter_base(dir)) : dir;
  return {read_truncate_dim(st_folder), read_matryoshka_dims(dir)};
}

LoadedModel load_model_folder(const std::string& dir) {
  check_model_folder(dir);
  const fs::path top(dir);
  if (is_adapter_folder(dir)) {
    // A LoRA adapter folder: its base model with the adapter merged in.
    const DualAdapter adapter = load_adapter_folder(dir);
    const std::string base = resolve_model_reference(adapter.base);
    if (is_adapter_folder(base))
      throw DataError(dir + ": its base model " + base + " is an adapter folder itself; expected a model folder");
    LoadedModel loaded = load_model_folder(base);
    merge_dual_adapter(loaded.model, adapter);
    if (adapter.prompts) loaded.prompts = *adapter.prompts;
    loaded.sizes.matryoshka_dims = adapter.matryoshka_dims;
    check_matryoshka_dims(loaded.sizes.matryoshka_dims, loaded.model->spec().embedding_dim(), dir);
    return loaded;
  }
  EncoderSpec spec;
  const auto st = read_sentence_transformer_layout(dir);
  const fs::path folder = transformer_folder(dir, st);  // where the BERT files are
  if (!read_ragmig_json(top / "ragmig.json", spec) && st) {
    spec.pooling = parse_pooling(st->pooling);
    spec.normalize = st->normalize;
  }
  if (st) spec.dense = st->dense;
  spec.bert = read_config(folder);
  if (!spec.dense.empty() && spec.dense.front().in_features != spec.bert.hidden_size)
    throw DataError((top / st->dense_paths.front() / "config.json").string() +
                    ": key \"in_features\": " + std::to_string(spec.dense.front().in_features) +
                    ", but the encoder's hidden_size is " + std::to_string(spec.bert.hidden_size));
  check_weights_fit(spec.bert.minimum_weight_count(), folder / "model.safetensors", folder / "config.json");
  for (size_t i = 0; i < spec.dense.size(); ++i)
    check_weights_fit(static_cast<double>(spec.dense[i].in_features) * static_cast<double>(spec.dense[i].out_features),
                      dense_weights_file(top / st->dense_paths[i]), top / st->dense_paths[i] / "config.json");
  FolderTokenizer tok = read_folder_tokenizer(folder.string());
  check_vocab_fits(tok.spec.vocab, spec.bert, tok.vocab_file);

  const fs::path passage = folder / "passage";
  std::optional<SentenceTransformerLayout> passage_st;
  if (!spec.shared_towers) {
    if (!(read_config(passage) == spec.bert))
      throw DataError((passage / "config.json").string() + ": the passage tower's config differs from the query tower's");
    check_weights_fit(spec.bert.minimum_weight_count(), passage / "model.safetensors", passage / "config.json");
    passage_st = read_sentence_transformer_layout(passage.string());
    if ((passage_st ? passage_st->dense : std::vector<DenseConfig>{}) != spec.dense)
      throw DataError((passage / "modules.json").string() + ": the passage tower's Dense module differs from the "
                      "query tower's");
    if (fs::exists(passage / "vocab.txt") || fs::exists(passage / "vocab.json") ||
        fs::exists(passage / "tokenizer.json"))
      if (const FolderTokenizer own = read_folder_tokenizer(passage.string()); own.spec.vocab != tok.spec.vocab)
        throw DataError("vocabulary and model mismatch: " + own.vocab_file + " differs from " + tok.vocab_file);
  }

  LoadedModel loaded{DualEncoder(spec), std::move(tok.spec), tok.max_length, read_prompts(dir),
                     folder_embedding_sizes(dir)};
  check_matryoshka_dims(loaded.sizes.matryoshka_dims, spec.embedding_dim(), dir);
  BertModel query = loaded.model->query_tower();
  load_bert_weights(query, (folder / "model.safetensors").string());
  if (!spec.shared_towers) {
    BertModel passage_tower = loaded.model->passage_tower();
    load_bert_weights(passage_tower, (passage / "model.safetensors").string());
  }
  for (size_t i = 0; i < spec.dense.size(); ++i) {
    Dense dense = loaded.model->query_dense()[i];
    load_dense_weights(dense, dense_weights_file(top / st->dense_paths[i]));
    if (!spec.shared_towers) {
      Dense passage_dense = loaded.model->passage_dense()[i];
      load_dense_weights(passage_dense, dense_weights_file(passage / passage_st->dense_paths[i]));
    }
  }
  return loaded;
}

}  // namespace ragmig::model
