// bench/train/bench_checkpoint: seconds to write one training checkpoint (the weights and AdamW's two moments
// of an encoder of all-MiniLM-L6-v2's shape, or BERT-base's with --shape base) through CheckpointStore::save,
// which streams the archive to its file, beside the way it was written before (the whole archive serialised
// into memory, then checksummed and written atomically), alternating, in the same run, into the same folder.
#include <fmt/format.h>
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "train/checkpoint_store.h"

namespace {

using Clock = std::chrono::steady_clock;

// The parameter tensors of a BERT encoder: embeddings, then per layer attention, its output, the MLP and two
// LayerNorms, then the pooler.
std::vector<torch::Tensor> encoder_tensors(int64_t vocab, int64_t hidden, int64_t layers, int64_t intermediate) {
  std::vector<std::vector<int64_t>> shapes = {{vocab, hidden}, {512, hidden}, {2, hidden}, {hidden}, {hidden}};
  for (int64_t l = 0; l < layers; ++l) {
    for (int i = 0; i < 4; ++i) shapes.insert(shapes.end(), {{hidden, hidden}, {hidden}});
    shapes.insert(shapes.end(), {{hidden}, {hidden}, {intermediate, hidden}, {intermediate}, {hidden, intermediate},
                                 {hidden}, {hidden}, {hidden}});
  }
  shapes.insert(shapes.end(), {{hidden, hidden}, {hidden}});
  std::vector<torch::Tensor> out;
  for (const auto& s : shapes) out.push_back(torch::randn(s));
  return out;
}

// Three groups of distinct tensors (the serialiser stores a tensor written twice once): the weights, AdamW's
// first and second moments.
using Groups = std::vector<std::pair<std::string, std::vector<torch::Tensor>>>;

void fill(torch::serialize::OutputArchive& archive, const Groups& groups) {
  for (const auto& [name, tensors] : groups) {
    torch::serialize::OutputArchive part;
    for (size_t i = 0; i < tensors.size(); ++i) part.write(std::to_string(i), tensors[i]);
    archive.write(name, part);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Checkpoint write time: streamed (CheckpointStore::save) beside serialised in memory first"};
  std::string shape = "minilm", dir = (std::filesystem::temp_directory_path() / "ragmig-bench-checkpoint").string();
  int repeats = 5;
  app.add_option("--shape", shape, "minilm | base")->check(CLI::IsMember({"minilm", "base"}));
  app.add_option("--dir", dir, "folder written to (on the disk checkpoints go to)");
  app.add_option("--repeats", repeats, "saves of each kind, alternating")->check(CLI::Range(1, 100));
  CLI11_PARSE(app, argc, argv);

  torch::manual_seed(0);
  Groups params;
  for (const char* name : {"model", "exp_avg", "exp_avg_sq"})
    params.emplace_back(name, shape == "base" ? encoder_tensors(30522, 768, 12, 3072)
                                              : encoder_tensors(30522, 384, 6, 1536));
  int64_t count = 0;
  for (const auto& p : params.front().second) count += p.numel();
  std::filesystem::remove_all(dir);
  ragmig::train::CheckpointStore store(dir + "/streamed", 2);
  std::filesystem::create_directories(dir + "/in-memory");

  std::vector<double> streamed, in_memory;
  uint64_t bytes = 0;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = Clock::now();
    const std::string path = store.save(r, [&](torch::serialize::OutputArchive& a) { fill(a, params); });
    streamed.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    bytes = std::filesystem::file_size(path);

    t0 = Clock::now();  // the former CheckpointStore::save: the archive in a string, its CRC, then the file
    torch::serialize::OutputArchive archive;
    fill(archive, params);
    std::ostringstream out;
    archive.save_to(out);
    const std::string whole = std::move(out).str();
    const uint32_t crc = ragmig::crc32_of(whole);
    ragmig::write_file_atomic(dir + "/in-memory/ckpt.pt", whole);
    ragmig::write_file_atomic(dir + "/in-memory/ckpt.json", fmt::format("{{\"crc32\": {}}}\n", crc));
    in_memory.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::filesystem::remove_all(dir);
  fmt::print("checkpoint of a {} encoder and its AdamW moments: {:.1f} M parameters x 3, {:.0f} MB, median of {}\n",
             shape, static_cast<double>(count) / 1e6, static_cast<double>(bytes) / 1e6, repeats);
  fmt::print("{:<34} {:>9} {:>9}\n", "", "seconds", "MB/s");
  const auto row = [&](const char* what, double s) {
    fmt::print("{:<34} {:>9.3f} {:>9.0f}\n", what, s, static_cast<double>(bytes) / 1e6 / s);
  };
  row("serialised in memory, then written", median(in_memory));
  row("streamed (CheckpointStore::save)", median(streamed));
  fmt::print("ratio (streamed / in memory): {:.2f}x\n", median(streamed) / median(in_memory));
  return 0;
}
