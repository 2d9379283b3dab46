// bench/train: training throughput (samples/s) of ragmig's C++ trainer step — DualEncoder forward,
// InfoNCE, backward, clipping, AdamW — beside the same model and loop in Python PyTorch, run from this
// process on the same machine in the same run, for a tiny and a BERT-base-shaped model. Prints the ratio.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "model/dual_encoder.h"
#include "train/grad_step.h"

#include <torch/csrc/autograd/profiler_legacy.h>

namespace {

struct Shape {
  std::string name;
  int64_t vocab, hidden, layers, heads, inter, batch, qlen, plen, steps, warmup;
};

double cpp_samples_per_s(const Shape& s, const std::string& profile) {
  using namespace ragmig;
  torch::manual_seed(0);
  model::EncoderSpec spec;
  spec.bert.vocab_size = s.vocab;
  spec.bert.hidden_size = s.hidden;
  spec.bert.num_hidden_layers = s.layers;
  spec.bert.num_attention_heads = s.heads;
  spec.bert.intermediate_size = s.inter;
  model::DualEncoder net(spec);
  net->train();
  torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(1e-4).weight_decay(0.01));
  train::PairBatch batch;
  batch.q_ids = torch::randint(5, s.vocab, {s.batch, s.qlen}, torch::kLong);
  batch.p_ids = torch::randint(5, s.vocab, {s.batch, s.plen}, torch::kLong);
  batch.q_mask = torch::ones_like(batch.q_ids);
  batch.p_mask = torch::ones_like(batch.p_ids);
  const train::EncodeFn encode = [&](const torch::Tensor& ids, const torch::Tensor& mask, train::Tower t) {
    return t == train::Tower::Query ? net->encode_queries(ids, mask) : net->encode_passages(ids, mask);
  };
  const auto scale = torch::full({}, 20.0);
  auto step = [&] {
    opt.zero_grad();
    train::backward_full(encode, batch, scale);
    torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
    opt.step();
  };
  for (int64_t i = 0; i < s.warmup; ++i) step();
  if (!profile.empty()) {  // the autograd profiler's per-op trace of the timed steps (then timed again without it)
    torch::autograd::profiler::RecordProfile guard(profile);
    for (int64_t i = 0; i < s.steps; ++i) step();
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < s.steps; ++i) step();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(s.batch * s.steps) / secs;
}

double python_samples_per_s(const Shape& s, int threads, const std::string& python, bool sdpa, const std::string& profile) {
  const std::string cmd = fmt::format(
      "{} {}/bench/train/train_ref.py --vocab {} --hidden {} --layers {} --heads {} --inter {} "
      "--batch {} --qlen {} --plen {} --steps {} --warmup {} --threads {}{}{}",
      python, RAGMIG_SOURCE_DIR, s.vocab, s.hidden, s.layers, s.heads, s.inter, s.batch, s.qlen, s.plen, s.steps,
      s.warmup, threads, sdpa ? " --sdpa" : "", profile.empty() ? "" : " --profile " + profile);
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return -1;
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  if (::pclose(pipe) != 0) {
    fmt::print(stderr, "python reference failed: {}\n{}\n", cmd, out);
    return -1;
  }
  return nlohmann::json::parse(out.substr(out.rfind('{')))["samples_per_s"].get<double>();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Training samples/s of ragmig (C++) beside the same loop in Python PyTorch"};
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  std::string python = RAGMIG_PYTHON_PATH;
  bool quick = false;
  std::string profile;
  app.add_option("--threads", threads, "intra-op threads for both sides");
  app.add_option("--profile", profile,
                 "write the autograd profiler's per-op traces of both sides to PREFIX-<shape>-{cpp,py}.json "
                 "(bench/train/profile_table.py sums them side by side)");
  app.add_option("--python", python, "Python with torch (default: the one LibTorch came from, the project venv)");
  app.add_flag("--quick", quick, "fewer steps (a smoke run)");
  CLI11_PARSE(app, argc, argv);
  at::set_num_threads(threads);

  const int64_t k = quick ? 1 : 4;
  const Shape shapes[] = {
      // The tiny config of examples/train-squad-tiny.toml: batch 64, queries 32 and passages 128 tokens.
      {"tiny (2x128)", 8000, 128, 2, 2, 512, 64, 32, 128, 5 * k, 2},
      // BERT-base shape (12 layers, 768 hidden), a batch small enough for a CPU.
      {"bert-base (12x768)", 30522, 768, 12, 12, 3072, 8, 16, 64, k, 1},
      // all-MiniLM-L6-v2's shape at the lengths of a retrieval fine-tune: queries 32, passages 256 tokens.
      {"minilm (6x384)", 30522, 384, 6, 12, 1536, 32, 32, 256, k, 1},
  };
  fmt::print("bench/train: samples/s on CPU, {} threads; Python = {} (same model, loss, AdamW step;\n"
             "plain = attention written out as matmul/softmax, SDPA = F.scaled_dot_product_attention as ragmig uses)\n",
             threads, python);
  fmt::print("{:<20} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "model", "C++", "Py plain", "Py SDPA", "C++/plain", "C++/SDPA");
  int failures = 0;
  for (const auto& s : shapes) {
    const std::string tag = profile.empty() ? "" : fmt::format("{}-{}", profile, s.name.substr(0, s.name.find(' ')));
    const double py = python_samples_per_s(s, threads, python, false, tag.empty() ? "" : tag + "-py.json");
    const double py_sdpa = python_samples_per_s(s, threads, python, true, "");
    failures += (py < 0) + (py_sdpa < 0);
    const double cpp = cpp_samples_per_s(s, tag.empty() ? "" : tag + "-cpp.json");
    fmt::print("{:<20} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.2f} {:>10.2f}\n", s.name, cpp, py, py_sdpa,
               py > 0 ? cpp / py : 0.0, py_sdpa > 0 ? cpp / py_sdpa : 0.0);
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}
