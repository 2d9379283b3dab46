// Bit-exact resume, end to end: the real binary is stopped by a real SIGTERM at some step, exits 75 after
// a checkpoint, is started again in the same run folder, and ends with the same weights, byte for byte,
// as a run that was never interrupted. Once per accumulation mode, and with plain (ungrouped) batches.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "core/atomic_file.h"
#include "model/model_folder.h"
#include "model/torch_safetensors.h"
#include "train/train_config.h"
#include "train_fixture.h"

namespace ragmig::testing {
namespace {

// The highest step of a progress event so far, -1 before the "start" event, 0 after it.
int64_t last_step(const std::filesystem::path& events) {
  std::ifstream in(events);
  std::string line;
  int64_t step = -1;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;  // a line being written
    if (j["event"] == "start") step = std::max<int64_t>(step, 0);
    if (j["event"] == "progress") step = std::max(step, j["step"].get<int64_t>());
  }
  return step;
}

// Starts a run and sends SIGTERM once it has reached `stop_at`; returns its exit code.
int run_and_stop(const std::filesystem::path& cfg, const std::filesystem::path& run, int64_t stop_at,
                 const std::vector<std::string>& extra = {}) {
  std::filesystem::create_directories(run.parent_path());
  std::vector<std::string> argv = {RAGMIG_BINARY, "train", cfg.string(), "--run-dir", run.string(), "--quiet"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  BackgroundProcess proc(argv, (run.string() + ".log"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (proc.running() && last_step(run / "events.jsonl") < stop_at && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  proc.signal(SIGTERM);
  return proc.wait();
}

// Accumulation modes with length-grouped batches (the default), and plain shuffled batches; passages up to
// 128 tokens so that their lengths differ.
struct ResumeCase {
  friend std::ostream& operator<<(std::ostream& os, const ResumeCase& c) { return os << c.name; }
  std::string name, accumulation;
  int64_t length_grouping;
  std::string unpad = "auto";  // auto is off on CPU
};

// args, then extra.
std::vector<std::string> with(const std::vector<std::string>& extra, std::vector<std::string> args) {
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A run restarted from step 0 would end with the same bytes as one resumed (the same seeds): each start after the
// first must have continued from the checkpoint of the stop before it, at or after the step it was stopped at, and
// no step was trained twice.
void expect_each_start_resumed(const std::filesystem::path& run, std::initializer_list<int64_t> stops) {
  const auto [trained, starts, checkpoint_before] = trained_steps(run);
  ASSERT_EQ(starts.size(), stops.size() + 1);
  size_t k = 1;
  for (int64_t stop_at : stops) {
    EXPECT_EQ(starts[k], checkpoint_before[k]) << "start " << k << " did not continue from the last checkpoint";
    EXPECT_GE(starts[k], stop_at) << "start " << k << " began before the step its run was stopped at";
    ++k;
  }
  EXPECT_FALSE(trained.empty());
  for (const auto& [step, times] : trained) EXPECT_EQ(times, 1) << "step " << step << " was trained " << times << "x";
}

// Trains dir/cfg.toml with the --set arguments `set` twice: into dir/ref without a stop, and into dir/stopped
// stopped by SIGTERM once it reaches each of `stops` (each stop exits 75) and then run to the end, each start after
// the first checked to have resumed. False, with the failure recorded, if a run did not end as it should.
bool train_straight_and_stopped(const std::filesystem::path& dir, const std::vector<std::string>& set,
                                std::initializer_list<int64_t> stops) {
  const auto ref =
      run_ragmig(with(set, {"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "ref").string(), "--quiet"}));
  EXPECT_EQ(ref.exit_code, 0) << ref.output;
  const auto run = dir / "stopped";
  for (int64_t stop_at : stops) {
    const int code = run_and_stop(dir / "cfg.toml", run, stop_at, set);
    EXPECT_EQ(code, 75) << "stop at " << stop_at << ": " << read_file(run.string() + ".log");
    if (code != 75) return false;
  }
  const auto rest = run_ragmig(with(set, {"train", (dir / "cfg.toml").string(), "--run-dir", run.string(), "--quiet"}));
  EXPECT_EQ(rest.exit_code, 0) << rest.output;
  if (rest.exit_code == 0) expect_each_start_resumed(run, stops);
  return ref.exit_code == 0 && rest.exit_code == 0;
}

class ResumeTest : public ::testing::TestWithParam<ResumeCase> {};

TEST_P(ResumeTest, SigtermThenRestartGivesBitIdenticalWeights) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  const ResumeCase& c = GetParam();
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl",
                                                  fmt::format("accumulation = \"{}\"\nchunk_size = 4\nlength_grouping = {}\nunpad = \"{}\"\n",
                                                              c.accumulation, c.length_grouping, c.unpad)));
  const std::vector<std::string> longer = {"--set", "data.max_passage_tokens=128", "--set", "model.max_position=128"};

  // Stopped before the first step, in the middle, and just after a periodic checkpoint.
  ASSERT_TRUE(train_straight_and_stopped(dir.path(), longer, {0, 13, 27}));
  const auto run = dir / "stopped";

  const std::string a = read_file(dir / "ref/model/model.safetensors");
  const std::string b = read_file(run / "model/model.safetensors");
  EXPECT_EQ(a.size(), b.size());
  EXPECT_TRUE(a == b) << "weights differ after resume";

  // The events tell the story: three preemptions, each after a checkpoint, and one done.
  std::ifstream in(run / "events.jsonl");
  std::string line;
  int preempted = 0, done = 0, starts = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    preempted += j["event"] == "preempted";
    done += j["event"] == "done";
    starts += j["event"] == "start";
  }
  EXPECT_EQ(preempted, 3);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(starts, 4);
}

INSTANTIATE_TEST_SUITE_P(Accumulation, ResumeTest,
                         ::testing::Values(ResumeCase{"none", "none", 4}, ResumeCase{"gradcache", "gradcache", 4},
                                           ResumeCase{"plain", "plain", 4}, ResumeCase{"ungrouped", "none", 0},
                                           ResumeCase{"unpadded", "none", 4, "on"},
                                           ResumeCase{"unpadded_gradcache", "gradcache", 0, "on"}),
                         [](const auto& info) { return info.param.name; });

// A tiny model trained for 3 steps on dir/pairs.jsonl (written here) into dir/base: the pretrained start of the
// LoRA and frozen-embedding runs. False, with the failure recorded, if it did not train.
bool train_tiny_base(const std::filesystem::path& dir) {
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "base.toml", tiny_config(dir / "pairs.jsonl"));
  const auto base = run_ragmig({"train", (dir / "base.toml").string(), "--run-dir", (dir / "base").string(),
                                "--quiet", "--set", "train.max_steps=3"});
  EXPECT_EQ(base.exit_code, 0) << base.output;
  return base.exit_code == 0;
}

// LoRA on a pretrained start (here a tiny model trained first), with GradCache: the same story, and what is
// saved is the adapter alone.
TEST(Resume, LoraSigtermThenRestartGivesBitIdenticalAdapters) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  ASSERT_TRUE(train_tiny_base(dir.path()));
  write_file_atomic(dir / "cfg.toml",
                    tiny_config(dir / "pairs.jsonl", "accumulation = \"gradcache\"\nchunk_size = 4\n") +
                        "[lora]\nrank = 4\ntargets = [\"query\", \"value\", \"dense\"]\n");
  ASSERT_TRUE(train_straight_and_stopped(dir.path(), {"--set", "model.init=" + (dir / "base" / "model").string()},
                                         {0, 13, 27}));
  const auto run = dir / "stopped";

  EXPECT_FALSE(std::filesystem::exists(run / "model/model.safetensors")) << "a LoRA run saves its adapter only";
  const std::string a = read_file(dir / "ref/model/adapter_model.safetensors");
  const std::string b = read_file(run / "model/adapter_model.safetensors");
  EXPECT_TRUE(a == b) << "adapters differ after resume";
  // The adapter trained (B left zero), and the checkpoints are adapter-sized, below the model's.
  double b_norm = 0;
  for (const auto& [name, t] : model::load_tensors((run / "model/adapter_model.safetensors").string()))
    if (name.find("lora_B") != std::string::npos) b_norm += t.abs().sum().item<double>();
  EXPECT_GT(b_norm, 0);
  std::uintmax_t biggest = 0;
  for (const auto& f : std::filesystem::directory_iterator(run / "checkpoints"))
    biggest = std::max(biggest, std::filesystem::file_size(f.path()));
  EXPECT_LT(biggest, std::filesystem::file_size(dir / "base/model/model.safetensors"));
}

// model.freeze_embeddings on a pretrained start (a tiny model trained first): the same bit-exact resume, the
// embedding tables leave the run exactly as they came in while every other weight trained, and the start event
// counts only the trained weights.
TEST(Resume, FrozenEmbeddingsStayAsLoadedAndResumeBitIdentically) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  ASSERT_TRUE(train_tiny_base(dir.path()));
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  const std::vector<std::string> set = {"--set", "model.init=" + (dir / "base" / "model").string(), "--set",
                                        "model.freeze_embeddings=true"};
  ASSERT_TRUE(train_straight_and_stopped(dir.path(), set, {0, 17}));
  const auto run = dir / "stopped";
  EXPECT_TRUE(read_file(dir / "ref/model/model.safetensors") == read_file(run / "model/model.safetensors"))
      << "weights differ after resume";

  const auto before = model::load_tensors((dir / "base/model/model.safetensors").string());
  const auto after = model::load_tensors((run / "model/model.safetensors").string());
  const auto is_table = [](const std::string& name) {
    return name.find("embeddings.") != std::string::npos && name.find("LayerNorm") == std::string::npos;
  };
  int frozen = 0, trained = 0;
  for (const auto& [name, t] : after) {
    const bool table = is_table(name);
    const bool same = torch::equal(t, before.at(name));
    if (table) {
      EXPECT_TRUE(same) << name << " changed";
      ++frozen;
    } else {
      trained += !same;
    }
  }
  EXPECT_EQ(frozen, 3) << "word, position and token-type tables";
  EXPECT_GT(trained, 10);
  const auto start = start_event(dir / "ref");
  int64_t tables = 0;
  for (const auto& [name, t] : before)
    if (is_table(name)) tables += t.numel();
  EXPECT_EQ(start["trainable_parameters"].get<int64_t>(), start["parameters"].get<int64_t>() - tables);

  const auto scratch = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "bad").string(), "--quiet",
                                   "--set", "model.freeze_embeddings=true"});
  EXPECT_EQ(scratch.exit_code, 2);
  EXPECT_NE(scratch.output.find("model.freeze_embeddings"), std::string::npos) << scratch.output;
}

// model.architecture = "modernbert": a ModernBERT from scratch (layers global, sliding, sliding: ModernBERT's window
// of 64 tokens each side, which passages of up to 160 tokens exceed; dropout in its attention and MLP; unpadded)
// trains, is stopped and resumed to the same weights bit for bit, and is written as ModernBERT.
TEST(Resume, AModernBertFromScratchResumesBitIdentically) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl", "unpad = \"on\"\n"));
  const std::vector<std::string> set = {"--set", "model.architecture=\"modernbert\"", "--set", "model.layers=3",
                                        "--set", "data.max_passage_tokens=160", "--set", "model.max_position=160"};
  ASSERT_TRUE(train_straight_and_stopped(dir.path(), set, {0, 13}));
  EXPECT_TRUE(read_file(dir / "ref/model/model.safetensors") == read_file(dir / "stopped/model/model.safetensors"))
      << "weights differ after resume";
  const auto config = nlohmann::json::parse(read_file(dir / "stopped/model/config.json"));
  EXPECT_EQ(config["model_type"], "modernbert");
  EXPECT_EQ(config["layer_types"],
            nlohmann::json::array({"full_attention", "sliding_attention", "sliding_attention"}));
  EXPECT_EQ(model::load_model_folder((dir / "stopped/model").string()).model->spec().bert.modernbert.local_attention,
            128);

  const auto odd = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "odd").string(), "--quiet",
                               "--set", "model.architecture=\"modernbert\"", "--set", "model.heads=32"});
  EXPECT_EQ(odd.exit_code, 2);
  EXPECT_NE(odd.output.find("model.heads': must leave an even head size"), std::string::npos) << odd.output;
}

// A Dense layer after pooling (sentence-transformers' Dense module) added to a pretrained start by
// model.dense_dim (the tiny base, 32 -> 12): it trains with the encoder, resumes bit-identically and is written
// back as 2_Dense; a start that has one already is refused.
TEST(Resume, ADenseLayerAddedToAPretrainedStartTrainsAndResumesBitIdentically) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  ASSERT_TRUE(train_tiny_base(dir.path()));
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  const std::vector<std::string> set = {"--set", "model.init=" + (dir / "base" / "model").string(), "--set",
                                        "model.dense_dim=12", "--set", "model.dense_activation=\"identity\""};
  ASSERT_TRUE(train_straight_and_stopped(dir.path(), set, {0, 17}));
  const auto run = dir / "stopped";
  for (const char* file : {"model.safetensors", "2_Dense/model.safetensors"})
    EXPECT_TRUE(read_file(dir / "ref/model" / file) == read_file(run / "model" / file))
        << file << " differs after resume";
  const auto loaded = model::load_model_folder((run / "model").string());
  const std::vector<model::DenseConfig> added = {{32, 12, true, model::Activation::Identity, false}};
  EXPECT_EQ(loaded.model->spec().dense, added);
  EXPECT_EQ(loaded.model->spec().embedding_dim(), 12);
  // It trained: the same seed's untrained layer (0 steps) is another.
  auto untrained = run_ragmig(with(set, {"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "zero").string(),
                                         "--quiet", "--set", "train.max_steps=0"}));
  ASSERT_EQ(untrained.exit_code, 0) << untrained.output;
  const auto dense_weight = [](const std::filesystem::path& folder) {
    return model::load_tensors((folder / "2_Dense/model.safetensors").string()).at("linear.weight");
  };
  EXPECT_FALSE(torch::equal(dense_weight(dir / "zero/model"), dense_weight(run / "model")));
  EXPECT_EQ(start_event(dir / "ref")["trainable_parameters"], start_event(dir / "ref")["parameters"]);

  auto twice = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "twice").string(), "--quiet",
                           "--set", "model.init=" + (run / "model").string(), "--set", "model.dense_dim=8"});
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("has a Dense module already (32 -> 12)"), std::string::npos) << twice.output;
}

// A Resize (control.json, as the scheduler writes it) at a known step, with runs stopped before it and after
// it: the same weights, byte for byte, as a run never stopped; every step after it at the new batch size and
// the LR scaled by the square-root rule.
struct ResizeCase {
  friend std::ostream& operator<<(std::ostream& os, const ResizeCase& c) { return os << c.name; }
  std::string name, accumulation, control;
  int64_t batch_after;
};
class ResizeTest : public ::testing::TestWithParam<ResizeCase> {};

std::vector<nlohmann::json> events_of(const std::filesystem::path& run) {
  std::vector<nlohmann::json> out;
  std::ifstream in(run / "events.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST_P(ResizeTest, StoppedBeforeAndAfterAResizeGivesBitIdenticalWeights) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  const ResizeCase& c = GetParam();
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl",
                                                  fmt::format("accumulation = \"{}\"\nchunk_size = 4\n", c.accumulation)));
  const auto ref = dir / "ref", run = dir / "stopped";
  for (const auto& folder : {ref, run}) {
    std::filesystem::create_directories(folder);
    write_file_atomic(folder / "control.json", c.control);
  }
  auto whole = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", ref.string(), "--quiet"});
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  // Before the resize is due, just after it (mid-epoch: the checkpoint holds the epoch's resize), in the next epoch.
  for (int64_t stop_at : {4, 12, 27}) {
    const int code = run_and_stop(dir / "cfg.toml", run, stop_at);
    ASSERT_EQ(code, 75) << "stop at " << stop_at << ": " << read_file(run.string() + ".log");
  }
  auto rest = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", run.string(), "--quiet"});
  ASSERT_EQ(rest.exit_code, 0) << rest.output;
  EXPECT_TRUE(read_file(ref / "model/model.safetensors") == read_file(run / "model/model.safetensors"))
      << "weights differ after resume around a resize";

  for (const auto& folder : {ref, run}) {
    int resizes = 0;
    for (const auto& e : events_of(folder)) {
      if (e["event"] == "resize") {
        ++resizes;
        EXPECT_EQ(e["step"], 10);
        EXPECT_EQ(e["from"], 16);
        EXPECT_EQ(e["batch_size"], c.batch_after);
      }
      if (e["event"] != "progress") continue;
      const int64_t step = e["step"], batch = step <= 10 ? 16 : c.batch_after;
      EXPECT_EQ(e["batch_size"], batch) << "step " << step;
      const double lr = 1e-3 * (step <= 5 ? step / 5.0 : (40.0 - step + 1) / 35.0) * std::sqrt(batch / 16.0);
      EXPECT_NEAR(e["lr"].get<double>(), lr, 1e-12) << "step " << step;
    }
    EXPECT_EQ(resizes, 1) << folder << ": applied once, and not again on resume";
  }
}

INSTANTIATE_TEST_SUITE_P(Resize, ResizeTest,
                         ::testing::Values(ResizeCase{"shrink_gradcache", "gradcache",
                                                      R"({"batch_size": 6, "chunk_size": 2, "after_step": 10})", 6},
                                           ResizeCase{"grow", "none", R"({"batch_size": 24, "after_step": 10})", 24}),
                         [](const auto& info) { return info.param.name; });

// The tiny config over 240 SQuAD pairs in dir/cfg.toml, trained for 3 steps in dir/run.
ProcessResult train_three_steps(const ScratchDir& dir) {
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  return run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string(), "--set", "train.max_steps=3"});
}

TEST(Resume, FinishedRunIsANoOpAndMoreStepsContinueIt) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  const std::string cfg = (dir / "cfg.toml").string(), run = (dir / "run").string();
  auto first = train_three_steps(dir);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const auto model = dir / "run/model/model.safetensors";
  const auto written = std::filesystem::last_write_time(model);

  auto again = run_ragmig({"train", cfg, "--run-dir", run, "--set", "train.max_steps=3"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("already complete"), std::string::npos) << again.output;
  EXPECT_EQ(std::filesystem::last_write_time(model), written);

  auto more = run_ragmig({"train", cfg, "--run-dir", run, "--set", "train.max_steps=5"});
  ASSERT_EQ(more.exit_code, 0) << more.output;
  EXPECT_NE(more.output.find("resumed at step 3"), std::string::npos) << more.output;
  auto result = nlohmann::json::parse(read_file(dir / "run/result.json"));
  EXPECT_EQ(result["step"], 5);
}

}  // namespace
}  // namespace ragmig::testing
