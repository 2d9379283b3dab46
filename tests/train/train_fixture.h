// Shared by the tests that run the real `ragmig train`: a small pairs file cut from real SQuAD data and a
// tiny-model config, so each run takes seconds.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "support/process.h"
#include "support/test_support.h"
#include "text/beir.h"
#include "text/pairs.h"

namespace ragmig::testing {

/// Writes the first `n` SQuAD training pairs (with one hard negative: the next example's positive) as JSONL.
inline void write_squad_pairs(const std::filesystem::path& out, int64_t n) {
  const auto squad = data_dir() / "beir/squad-train";
  const auto beir = text::read_beir(squad.string());
  const auto examples = text::examples_from_beir(beir, text::read_qrels(text::qrels_path(squad.string(), "train")));
  std::string jsonl;
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(examples.size()); ++i) {
    const auto& e = examples[static_cast<size_t>(i)];
    const auto& other = examples[static_cast<size_t>((i + 37) % n)];
    nlohmann::json row = {{"query", e.query}, {"positive", e.positive}, {"negatives", {other.positive}}};
    jsonl += row.dump() + "\n";
  }
  write_file_atomic(out, jsonl);
}

/// A config for a model small enough that a 40-step run takes a few seconds on one core.
inline std::string tiny_config(const std::filesystem::path& pairs, const std::string& extra = "") {
  return fmt::format(R"([data]
pairs = "{}"
max_query_tokens = 24
max_passage_tokens = 64

[model]
vocab_size = 1500
hidden_size = 32
layers = 1
heads = 2
intermediate_size = 64
max_position = 64
dropout = 0.1

[train]
max_steps = 40
batch_size = 16
warmup_steps = 5
lr = 1e-3
hard_negatives = 1
learn_temperature = true
checkpoint_every = 9
log_every = 1
threads = 1
seed = 7
{}
)",
                     pairs.string(), extra);
}

/// What a run's own events (events.jsonl) say of its training: how many times each step was trained, the step
/// each "start" event gave, and the newest checkpoint before each start (0: none), which a resume starts from.
struct TrainedSteps {
  std::map<int64_t, int> trained;
  std::vector<int64_t> starts;
  std::vector<int64_t> checkpoint_before;
};

/// A run's events.jsonl, one object per line.
inline std::vector<nlohmann::json> read_events(const std::filesystem::path& run_dir) {
  std::vector<nlohmann::json> out;
  const std::string events = read_file(run_dir / "events.jsonl");
  for (size_t pos = 0; pos < events.size();) {
    const size_t nl = std::min(events.find('\n', pos), events.size());
    out.push_back(nlohmann::json::parse(events.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  return out;
}

/// A run's start event (an empty object if it has none, so value() still answers).
inline nlohmann::json start_event(const std::filesystem::path& run_dir) {
  for (auto& e : read_events(run_dir))
    if (e.value("event", "") == "start") return e;
  return nlohmann::json::object();
}

inline TrainedSteps trained_steps(const std::filesystem::path& run_dir) {
  TrainedSteps out;
  int64_t last_checkpoint = 0;
  for (const auto& e : read_events(run_dir)) {
    if (e["event"] == "progress") out.trained[e["step"].get<int64_t>()]++;
    if (e["event"] == "checkpoint") last_checkpoint = e["step"];
    if (e["event"] == "start") {
      out.starts.push_back(e["step"]);
      out.checkpoint_before.push_back(last_checkpoint);
    }
  }
  return out;
}

inline ProcessResult run_ragmig(std::vector<std::string> args) {
  args.insert(args.begin(), RAGMIG_BINARY);
  return run_process(args);
}

}  // namespace ragmig::testing
