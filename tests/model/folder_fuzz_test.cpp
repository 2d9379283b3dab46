// Mutation fuzzing of model folders: every text file of a folder ragmig writes (config.json, the vocabulary and
// tokenizer files, the sentence-transformers modules, ragmig.json, an adapter's adapter_config.json), edited at
// random one at a time, either loads — and then embeds a text without error — or is refused with ragmig's own
// error, never anything else (a JSON type error, an out-of-range index, a LibTorch error from a shape the config
// promised and the weights do not have). The weights themselves are fuzzed in safetensors_test.cpp.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/splitmix.h"
#include "model/lora.h"
#include "model/model_folder.h"
#include "support/byte_level_tokenizers.h"
#include "support/json_variants.h"
#include "support/test_support.h"
#include "support/text_mutation.h"
#include "support/tiny_bert.h"
#include "text/tokenizer.h"

namespace ragmig::model {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

std::vector<std::string> word_piece_vocab() {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const char* w : {"the", "cat", "sat", "on", "mat", "##s", "gene", "protein", "a", "b"}) vocab.push_back(w);
  return vocab;
}

EncoderSpec spec_for(int64_t vocab, const std::string& family) {
  EncoderSpec s;
  s.bert = testing::tiny_bert_config(vocab, 16, 2, 24);
  if (family == "modernbert") s.bert = testing::as_modernbert(s.bert, 4);
  if (family == "roberta" || family == "xlm-roberta") {
    s.bert.model_type = family;
    s.bert.pad_token_id = 1;
    s.bert.max_position_embeddings = 26;
  }
  return s;
}

// The folders fuzzed: each kind of tokenizer file ragmig reads, a Dense module, every optional record.
void write_folders(const fs::path& root) {
  torch::manual_seed(3);
  {  // BERT, WordPiece (vocab.txt), a Dense module, prompts, sizes and the training record.
    EncoderSpec s = spec_for(15, "bert");
    s.dense = {DenseConfig{16, 8}};
    DualEncoder net(s);
    SaveOptions o;
    o.max_length = 20;
    o.prompts = {"query: ", "passage: "};
    o.training = TrainingQueries{"train", {"q1"}};
    o.sizes = {8, {8, 4}};
    save_model_folder((root / "bert").string(), net, text::word_piece_spec(word_piece_vocab()), o);
  }
  {  // ModernBERT: tokenizer.json alone (WordPiece of the fast tokenizer class).
    DualEncoder net(spec_for(15, "modernbert"));
    save_model_folder((root / "modernbert").string(), net, text::word_piece_spec(word_piece_vocab()));
  }
  {  // RoBERTa: byte-level BPE (vocab.json + merges.txt).
    text::TokenizerSpec t = testing::roberta_style_tokenizer();
    t.vocab.push_back("at");
    t.merges = {{"a", "t"}};
    DualEncoder net(spec_for(static_cast<int64_t>(t.vocab.size()), "roberta"));
    save_model_folder((root / "roberta").string(), net, t);
  }
  {  // Qwen3: byte-level BPE split by Qwen2's pattern, $A <|endoftext|> (tokenizer.json), last-token pooling.
    text::TokenizerSpec t = testing::qwen_style_tokenizer();
    t.vocab.insert(t.vocab.end(), {"at", "<|im_start|>"});
    t.merges = {{"a", "t"}};
    t.added_tokens = {"<|im_start|>"};
    EncoderSpec s;
    s.bert = bert_config_from_json({{"model_type", "qwen3"},
                                    {"vocab_size", t.vocab.size()},
                                    {"hidden_size", 16},
                                    {"num_hidden_layers", 2},
                                    {"num_attention_heads", 4},
                                    {"num_key_value_heads", 2},
                                    {"head_dim", 8},
                                    {"intermediate_size", 24},
                                    {"max_position_embeddings", 26}},
                                   "qwen3");
    s.pooling = Pooling::LastToken;
    DualEncoder net(s);
    save_model_folder((root / "qwen3").string(), net, t);
  }
  {  // Gemma 3 (EmbeddingGemma's layout): SentencePiece BPE with byte fallback, <bos> $A <eos>, two Dense modules.
    text::TokenizerSpec t = testing::gemma_style_tokenizer();
    t.vocab.insert(t.vocab.end(), {"\u2581", "a", "\u2581a", "<start_of_turn>"});
    t.merges = {{"\u2581", "a"}};
    t.added_tokens = {"<start_of_turn>"};
    EncoderSpec s;
    s.bert = bert_config_from_json({{"model_type", "gemma3_text"},
                                    {"vocab_size", t.vocab.size()},
                                    {"hidden_size", 16},
                                    {"num_hidden_layers", 2},
                                    {"num_attention_heads", 4},
                                    {"num_key_value_heads", 2},
                                    {"head_dim", 8},
                                    {"intermediate_size", 24},
                                    {"max_position_embeddings", 26},
                                    {"sliding_window", 4},
                                    {"layer_types", {"sliding_attention", "full_attention"}},
                                    {"use_bidirectional_attention", true}},
                                   "gemma3");
    s.dense = {DenseConfig{16, 24, false, Activation::Identity, false},
               DenseConfig{24, 16, false, Activation::Identity, false}};
    DualEncoder net(s);
    save_model_folder((root / "gemma3").string(), net, t);
  }
  {  // Mistral (e5-mistral's layout): SentencePiece BPE behind a Metaspace, <s> $A </s>, a window, last-token pooling.
    text::TokenizerSpec t = testing::llama_style_tokenizer();
    t.vocab.insert(t.vocab.end(), {"\u2581", "a", "\u2581a"});
    t.merges = {{"\u2581", "a"}};
    EncoderSpec s;
    s.bert = bert_config_from_json({{"model_type", "mistral"},
                                    {"vocab_size", t.vocab.size()},
                                    {"hidden_size", 16},
                                    {"num_hidden_layers", 1},
                                    {"num_attention_heads", 4},
                                    {"num_key_value_heads", 2},
                                    {"intermediate_size", 24},
                                    {"sliding_window", 20}},
                                   "mistral");
    s.pooling = Pooling::LastToken;
    DualEncoder net(s);
    save_model_folder((root / "mistral").string(), net, t);
  }
  {  // XLM-R: SentencePiece Unigram (tokenizer.json).
    text::TokenizerSpec t;
    t.kind = text::TokenizerKind::kUnigram;
    t.special = text::roberta_special_tokens();
    t.vocab = {"<s>", "<pad>", "</s>", "<unk>", "<mask>", "\u2581", "\u2581the", "\u2581cat", "a", "t"};
    t.scores = {0, 0, 0, 0, 0, -4, -2, -2, -5, -5};
    DualEncoder net(spec_for(static_cast<int64_t>(t.vocab.size()), "xlm-roberta"));
    save_model_folder((root / "xlmr").string(), net, t);
  }
  {  // A LoRA adapter of the BERT folder, with its own prompts and Matryoshka sizes.
    LoadedModel base = load_model_folder((root / "bert").string());
    BertModel tower = base.model->query_tower();
    LoraSpec spec;
    spec.rank = 2;
    spec.alpha = 4;
    spec.targets = {"query", "value"};
    attach_lora(tower, spec);
    DualAdapter adapter;
    adapter.base = (root / "bert").string();
    adapter.query = own_adapter(tower, spec);
    adapter.prompts = text::Prompts{"q: ", ""};
    adapter.matryoshka_dims = {8};
    save_adapter_folder((root / "adapter").string(), adapter);
  }
}

// Every file of `dir` that is text (not the weights), relative.
std::vector<fs::path> text_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() != ".safetensors")
      out.push_back(fs::relative(entry.path(), dir));
  std::sort(out.begin(), out.end());
  return out;
}

// What a user of the folder does: load it, read its records, tokenize and embed a text.
void use(const fs::path& dir) {
  const std::string d = dir.string();
  (void)folder_prompts(d);
  (void)folder_embedding_sizes(d);
  (void)read_training_queries(d);
  LoadedModel loaded = load_model_folder(d);
  const auto tokenizer = text::make_tokenizer(loaded.tokenizer);
  std::vector<int64_t> ids;
  for (const int32_t id : tokenizer->encode(loaded.prompts.query + "the cats sat on a mat", 20)) ids.push_back(id);
  const torch::Tensor t = torch::tensor(ids).unsqueeze(0);
  loaded.model->eval();
  torch::NoGradGuard no_grad;
  (void)loaded.model->encode_queries(t, torch::ones_like(t));
}

// Tallies what use() made of each edited folder: anything but ragmig's own errors is a failure, described by `what`.
struct Outcomes {
  int loaded = 0, refused = 0;
  void use_edited(const fs::path& dir, const std::function<std::string()>& what) {
    try {
      use(dir);
      ++loaded;
    } catch (const Error&) {
      ++refused;
    } catch (const std::exception& e) {
      ADD_FAILURE() << what() << " escaped as: " << e.what();
    }
  }
};

TEST(FolderFuzz, MutatedFilesLoadOrAreRefusedWithRagmigsErrors) {
  at::set_num_threads(1);  // tiny models: threads would only contend with the test beside it
  ScratchDir scratch;
  write_folders(scratch.path());
  Outcomes outcomes;
  int files = 0;
  for (const char* name : {"bert", "modernbert", "roberta", "qwen3", "gemma3", "mistral", "xlmr", "adapter"}) {
    const fs::path dir = scratch / name;
    ASSERT_NO_THROW(use(dir)) << name << " as written";
    for (const fs::path& file : text_files(dir)) {
      ++files;
      const fs::path path = dir / file;
      const std::string original = read_file(path);
      for (uint64_t i = 0; i < 200; ++i) {
        uint64_t h = splitmix64(i ^ std::hash<std::string>{}(file.string()) ^ 0xf0dd);
        std::string text = original;
        const int edits = 1 + static_cast<int>(splitmix64(h) % 3);
        for (int e = 0; e < edits; ++e) text = testing::mutate(text, h);
        write_file_atomic(path, text);
        outcomes.use_edited(dir, [&] {
          return fmt::format("{}/{}, mutation {}:\n{}\n---", name, file.string(), i, text.substr(0, 2000));
        });
      }
      write_file_atomic(path, original);
    }
  }
  std::printf("%d files, %d mutations loaded, %d refused\n", files, outcomes.loaded, outcomes.refused);
  EXPECT_GT(files, 30);
  EXPECT_GT(outcomes.loaded, 100) << "mutations of values a loader ignores or accepts";
  EXPECT_GT(outcomes.refused, 500);
}

// Values of every type and edge (tests/support/json_variants.h) put, one at a time, at every place a JSON file of the
// folders has a value: every key of every file, array elements and a vocabulary's entries one of each shape.
TEST(FolderFuzz, EveryJsonValueReplacedByOneOfAnotherTypeOrSizeLoadsOrIsRefused) {
  at::set_num_threads(1);
  ScratchDir scratch;
  write_folders(scratch.path());
  Outcomes outcomes;
  int places = 0;
  for (const char* name : {"bert", "modernbert", "roberta", "qwen3", "gemma3", "mistral", "xlmr", "adapter"}) {
    const fs::path dir = scratch / name;
    for (const fs::path& file : text_files(dir)) {
      const fs::path path = dir / file;
      const std::string original = read_file(path);
      const auto parsed = nlohmann::json::parse(original, nullptr, false);
      if (parsed.is_discarded()) continue;  // vocab.txt, merges.txt
      places += static_cast<int>(testing::json_places(parsed).size());
      testing::for_each_json_variant(parsed, [&](const nlohmann::json& edited, const auto& at, const auto& value) {
        write_file_atomic(path, edited.dump());
        outcomes.use_edited(dir, [&] {
          return fmt::format("{}/{} at {} = {}", name, file.string(), at.to_string(), value.dump());
        });
        return true;
      });
      write_file_atomic(path, original);
    }
  }
  std::printf("%d places, %d edits loaded, %d refused\n", places, outcomes.loaded, outcomes.refused);
  EXPECT_GT(places, 300);
  EXPECT_GT(outcomes.refused, 1000);
}

}  // namespace
}  // namespace ragmig::model
