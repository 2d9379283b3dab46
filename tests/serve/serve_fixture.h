// A tiny real model folder and LoRA adapter folders for the serve tests, and a `ragmig serve` process on a free
// loopback port with an HTTP client to it.
#pragma once

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/atomic_file.h"
#include "model/lora.h"
#include "model/model_folder.h"
#include "support/process.h"
#include "support/random_adapter.h"
#include "support/test_support.h"
#include "support/tiny_bert.h"

namespace ragmig::testing {

inline const std::vector<std::string>& fixture_words() {
  static const std::vector<std::string> words = {"the", "cat", "dog", "sat", "on", "mat", "a", "red", "blue",
                                                 "house", "river", "protein", "cell", "gene", "drug", "trial"};
  return words;
}

/// A random tiny encoder with a vocabulary of fixture_words(), mean pooling, normalised, max 32 tokens.
inline void write_tiny_model(const std::filesystem::path& dir) {
  std::vector<std::string> vocab = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const auto& w : fixture_words()) vocab.push_back(w);
  torch::manual_seed(5);
  model::EncoderSpec spec;
  spec.bert = tiny_bert_config(static_cast<int64_t>(vocab.size()), 32, 4, 32);
  model::DualEncoder net(spec);
  model::SaveOptions options;
  options.max_length = 32;
  model::save_model_folder(dir.string(), net, ragmig::text::word_piece_spec(vocab), options);
}

/// A random tiny XLM-R (positions from pad + 1) whose SentencePiece Unigram tokenizer knows "▁" + each of
/// fixture_words() and their letters, mean pooling, normalised, max 32 tokens.
inline void write_tiny_xlmr_model(const std::filesystem::path& dir) {
  text::TokenizerSpec tokenizer;
  tokenizer.kind = text::TokenizerKind::kUnigram;
  tokenizer.special = text::roberta_special_tokens();
  tokenizer.vocab = {"<s>", "<pad>", "</s>", "<unk>", "<mask>", "\u2581"};
  tokenizer.scores = {0, 0, 0, 0, 0, -4};
  for (const auto& w : fixture_words()) {
    tokenizer.vocab.push_back("\u2581" + w);
    tokenizer.scores.push_back(-2);
  }
  for (char c = 'a'; c <= 'z'; ++c) {
    tokenizer.vocab.emplace_back(1, c);
    tokenizer.scores.push_back(-5);
  }
  torch::manual_seed(5);
  model::EncoderSpec spec;
  spec.bert = tiny_bert_config(static_cast<int64_t>(tokenizer.vocab.size()), 32, 4, 34);
  spec.bert.model_type = "xlm-roberta";
  spec.bert.pad_token_id = 1;
  model::DualEncoder net(spec);
  model::SaveOptions options;
  options.max_length = 32;
  model::save_model_folder(dir.string(), net, tokenizer, options);
}

/// A random adapter (B not zero) for the tiny model, saved under adapters/<name>.
inline void write_tiny_adapter(const std::filesystem::path& model, const std::filesystem::path& adapters,
                               const std::string& name, uint64_t seed, std::vector<std::string> targets = {"query", "value", "dense"}) {
  auto loaded = model::load_model_folder(model.string());
  model::BertModel tower = loaded.model->query_tower();
  model::LoraSpec spec;
  spec.rank = 4;
  spec.alpha = 8;
  spec.targets = std::move(targets);
  model::DualAdapter adapter;
  adapter.base = model.string();
  adapter.query = random_lora_adapter(tower, spec, seed, 0.3);
  model::save_adapter_folder((adapters / name).string(), adapter);
}

/// `ragmig serve` on a free port; waits until it listens.
class Server {
 public:
  Server(const std::filesystem::path& log, std::vector<std::string> args) : log_(log) {
    std::vector<std::string> argv = {RAGMIG_BINARY, "serve", "--port", "0", "--threads", "1"};
    argv.insert(argv.end(), args.begin(), args.end());
    proc_ = std::make_unique<BackgroundProcess>(argv, log.string());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (port_ == 0 && proc_->running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::string out = std::filesystem::exists(log) ? read_file(log) : "";
      const auto at = out.find("listening on http://127.0.0.1:");
      if (at != std::string::npos && out.find('\n', at) != std::string::npos)
        port_ = std::stoi(out.substr(at + std::string("listening on http://127.0.0.1:").size()));
    }
  }
  int port() const { return port_; }
  std::string log() const { return read_file(log_); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }
  BackgroundProcess& process() { return *proc_; }

 private:
  std::filesystem::path log_;
  std::unique_ptr<BackgroundProcess> proc_;
  int port_ = 0;
};

}  // namespace ragmig::testing
