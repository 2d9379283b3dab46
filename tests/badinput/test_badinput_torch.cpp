// Issue 25's rows that train and eval answer, each the exact case a hostile user tried (exit code and the words
// of the answer), and their general forms:
//  1  NaN or infinity in a model's weights (eval refuses the folder, naming file and tensor; any tensor, any
//     position) and a training loss that becomes NaN (the run stops, the last good checkpoint stays);
//  2-4 the resume rule: a shape-changing key refused before anything is written (every key of the config is
//     either refused or documented as free to change), a steering key logged as config_changed, max_steps
//     below the checkpoint refused rather than reported done;
//  5  events.jsonl after kill -9 at random points, its last line also torn at a random byte: every line is
//     valid JSON and the run resumes to its end;
//  9  a full disk under eval's cache: warnings, no partial file, the same figures as without a cache;
//  15 `ragmig train` started by hand: its OpenMP threads sleep when idle unless the user said otherwise;
//  and LibTorch's errors in one line, without its stack trace unless RAGMIG_DEBUG=1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <thread>

#include "../eval/eval_fixture.h"
#include "../train/train_fixture.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "model/model_folder.h"
#include "model/torch_error.h"
#include "train/resume_rule.h"
#include "train/train_config.h"

namespace ragmig::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::vector<json> events_of(const fs::path& run) {
  std::vector<json> out;
  std::ifstream in(run / "events.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

// Row 1, the exact case: `ragmig eval --retriever dense --model M` where M holds a NaN weight.
TEST(BadInputTorch, Row1EvalRefusesAModelWithNanWeights) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  torch::manual_seed(1);
  model::EncoderSpec spec;
  spec.bert = tiny_bert_config(80, 32, 2, 64);
  model::DualEncoder m(spec);
  {
    torch::NoGradGuard no_grad;
    m->named_parameters()["query.encoder.layer.0.attention.self.key.weight"][1][2] = std::numeric_limits<float>::quiet_NaN();
  }
  model::save_model_folder((dir / "model").string(), m, ragmig::text::word_piece_spec(toy_vocab()));
  const auto r = run_eval({"--data", (dir / "beir").string(), "--retriever", "dense", "--model", (dir / "model").string(),
                           "--no-cache", "--device", "cpu"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr((dir / "model/model.safetensors").string()));
  EXPECT_THAT(r.output, ::testing::HasSubstr("encoder.layer.0.attention.self.key.weight"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("NaN or infinite"));
  EXPECT_THAT(r.output, ::testing::Not(::testing::HasSubstr("ndcg@10")));
}

// Row 1, the general form: NaN, +inf or -inf at a random position of a random tensor is named at load.
TEST(BadInputTorch, Row1AnyNonFiniteValueInAnyTensorIsNamed) {
  std::mt19937 rng(25);
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (int trial = 0; trial < 12; ++trial) {
    ScratchDir dir;
    model::EncoderSpec spec;
    spec.bert = tiny_bert_config(80, 32, 2, 64);
    model::DualEncoder m(spec);
    auto params = m->named_parameters();
    const auto& item = params[std::uniform_int_distribution<size_t>(0, params.size() - 1)(rng)];
    const int64_t at = std::uniform_int_distribution<int64_t>(0, item.value().numel() - 1)(rng);
    {
      torch::NoGradGuard no_grad;
      item.value().view(-1)[at] = bad[trial % 3];
    }
    model::save_model_folder((dir / "m").string(), m, ragmig::text::word_piece_spec(toy_vocab()));
    try {
      model::load_model_folder((dir / "m").string());
      ADD_FAILURE() << "loaded " << item.key() << " with " << bad[trial % 3] << " at " << at;
    } catch (const DataError& e) {
      // The folder's name for it is BertModel's: "query." is ragmig's tower prefix.
      const std::string name = item.key().substr(item.key().find('.') + 1);
      EXPECT_THAT(e.what(), ::testing::HasSubstr(name)) << item.key();
      EXPECT_THAT(e.what(), ::testing::HasSubstr("NaN or infinite"));
    }
  }
}

// Row 1, training: a loss that becomes NaN stops the run with a named error, and the newest checkpoint is the
// last good one (no model folder, no checkpoint from NaN weights).
TEST(BadInputTorch, Row1ADivergingLossStopsAndKeepsTheGoodCheckpoint) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  // One AdamW step of 1e30 puts the weights past float range: the next loss is NaN.
  auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", (dir / "run").string(), "--quiet", "--set",
                       "train.lr=1e30", "--set", "train.warmup_steps=0", "--set", "train.checkpoint_every=1", "--set",
                       "train.max_grad_norm=0", "--set", "train.max_steps=20", "--set", "eval.split="});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("training diverged"), std::string::npos) << r.output;
  std::vector<json> diverged;
  for (const auto& e : events_of(dir / "run"))
    if (e["event"] == "diverged") diverged.push_back(e);
  ASSERT_EQ(diverged.size(), 1u) << r.output;
  const int64_t step = diverged[0]["step"];
  EXPECT_EQ(diverged[0]["last_checkpoint"], step - 1);
  EXPECT_FALSE(fs::exists(dir / "run/model")) << "no model folder from NaN weights";
  EXPECT_FALSE(fs::exists(dir / ("run/checkpoints/ckpt-" + std::to_string(step) + ".json")));
}

// A run folder trained for 3 steps, shared by the resume rows.
class ResumeRows : public ::testing::Test {
 protected:
  void SetUp() override {
    RAGMIG_REQUIRE_DATA("beir/squad-train");
    write_squad_pairs(dir_ / "pairs.jsonl", 240);
    write_file_atomic(dir_ / "cfg.toml", tiny_config(dir_ / "pairs.jsonl"));
    const auto first = train({"--set", "train.max_steps=3"});
    ASSERT_EQ(first.exit_code, 0) << first.output;
  }
  ProcessResult train(std::vector<std::string> args) {
    args.insert(args.begin(), {"train", (dir_ / "cfg.toml").string(), "--run-dir", (dir_ / "run").string()});
    return run_ragmig(args);
  }
  ScratchDir dir_;
};

// Row 2: a shape-changing key is refused before anything in the folder is written, in one line.
TEST_F(ResumeRows, Row2AChangedShapeIsRefusedBeforeAnythingIsWritten) {
  const std::string config_before = read_file(dir_ / "run/config.json");
  const std::string events_before = read_file(dir_ / "run/events.jsonl");
  const auto r = train({"--set", "model.hidden_size=64", "--set", "train.max_steps=5"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("was trained with model.hidden_size=32 (this config says 64)"));
  EXPECT_THAT(r.output, ::testing::HasSubstr("use a new --run-dir"));
  EXPECT_THAT(r.output, ::testing::Not(::testing::HasSubstr("c10::Error")));
  EXPECT_THAT(r.output, ::testing::Not(::testing::HasSubstr("frame #")));
  EXPECT_EQ(read_file(dir_ / "run/config.json"), config_before);
  EXPECT_EQ(read_file(dir_ / "run/events.jsonl"), events_before);
}

// Row 2 without config.json (deleted, or replaced by hand): the newest checkpoint's manifest holds the config
// that shaped its weights, so the change is still refused before anything is written (it used to resume,
// then fail inside LibTorch on the first LayerNorm).
TEST_F(ResumeRows, Row2TheCheckpointRemembersItsShapeWithoutConfigJson) {
  fs::remove(dir_ / "run/config.json");
  fs::remove(dir_ / "run/result.json");
  const std::string events_before = read_file(dir_ / "run/events.jsonl");
  const auto r = train({"--set", "model.hidden_size=64", "--set", "train.max_steps=5"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("was trained with model.hidden_size=32 (this config says 64)"));
  EXPECT_FALSE(fs::exists(dir_ / "run/config.json"));
  EXPECT_EQ(read_file(dir_ / "run/events.jsonl"), events_before);
  // The same config as the checkpoint's goes on from it.
  const auto same = train({"--set", "train.max_steps=5"});
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_THAT(same.output, ::testing::HasSubstr("resumed at step 3"));
}

// Row 3: a key that may change on resume is taken and logged with its old and new value.
TEST_F(ResumeRows, Row3AChangedLearningRateIsLogged) {
  const auto r = train({"--set", "train.lr=5e-4", "--set", "train.max_steps=5"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  bool logged = false;
  for (const auto& e : events_of(dir_ / "run"))
    if (e["event"] == "config_changed")
      for (const auto& c : e["changes"])
        if (c["key"] == "train.lr") logged = c["before"] == 1e-3 && c["after"] == 5e-4;
  EXPECT_TRUE(logged) << read_file(dir_ / "run/events.jsonl");
  EXPECT_EQ(json::parse(read_file(dir_ / "run/config.json"))["train"]["lr"], 5e-4);
}

// Row 4: max_steps below the checkpoint's step: refused, no fabricated result.
TEST_F(ResumeRows, Row4MaxStepsBelowTheCheckpointIsRefused) {
  const std::string result_before = read_file(dir_ / "run/result.json");
  const auto r = train({"--set", "train.max_steps=2"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("is at step 3, past train.max_steps=2"));
  EXPECT_EQ(read_file(dir_ / "run/result.json"), result_before);
}

// Rows 2-3, the general form: every key of the training config is either refused when it changes on resume,
// or one the refusal message lists as free to change; a changed value of any refused key is named with both
// values.
TEST(BadInputTorch, Row2EveryConfigKeyFollowsTheResumeRule) {
  train::TrainConfig defaults;
  const json config = train::make_config_table(defaults).to_json();
  const std::string listed = train::refusal_message("R", {});
  int refused = 0, allowed = 0;
  for (const auto& [section, keys] : config.items())
    for (const auto& [name, value] : keys.items()) {
      const std::string key = section + "." + name;
      json after = config;
      after[section][name] = value.is_string() ? json(value.get<std::string>() + "x")
                             : value.is_boolean() ? json(!value.get<bool>())
                             : value.is_number() ? json(value.get<double>() + 1)
                                                 : json("changed");
      const train::ResumeCheck check = train::compare_for_resume(config, after);
      ASSERT_EQ(check.refused.size() + check.allowed.size(), 1u) << key;
      if (train::may_change_on_resume(key)) {
        ++allowed;
        ASSERT_EQ(check.allowed[0].key, key);
        const bool documented = listed.find(name) != std::string::npos ||
                                listed.find(section + ".*") != std::string::npos || key.find(".debug_") != std::string::npos;
        EXPECT_TRUE(documented) << key << " may change but the refusal message does not say so: " << listed;
      } else {
        ++refused;
        ASSERT_EQ(check.refused[0].key, key);
        const std::string msg = train::refusal_message("R", check.refused);
        EXPECT_THAT(msg, ::testing::HasSubstr(key + "=" + value.dump() + " (this config says " + after[section][name].dump()));
      }
    }
  EXPECT_GT(refused, 20);
  EXPECT_GT(allowed, 10);
}

// Row 5 and its general form: `ragmig train` killed with SIGKILL at random points, and the last line of its
// event log then cut at a random byte (what a writer killed inside write(2), or a full disk, leaves); started
// again each time. Every line stays valid JSON, and the run reaches its end.
TEST(BadInputTorch, Row5EventsStayValidJsonAfterKillsAndTornLines) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  const fs::path run = dir / "run", events = run / "events.jsonl";
  const std::vector<std::string> argv = {RAGMIG_BINARY, "train", (dir / "cfg.toml").string(), "--run-dir",
                                         run.string(), "--quiet", "--set", "train.max_steps=60",
                                         "--set", "train.checkpoint_every=5"};
  std::mt19937 rng(5);
  int kills = 0, cuts = 0;
  for (int round = 0; round < 8 && !fs::exists(run / "result.json"); ++round) {
    BackgroundProcess proc(argv, (dir / "train.log").string());
    // A random point after the log has begun (its first line is written once input is loaded).
    const auto begun = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (proc.running() && (!fs::exists(events) || fs::file_size(events) == 0) && std::chrono::steady_clock::now() < begun)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 400)(rng)));
    if (!proc.running()) break;
    proc.signal(SIGKILL);
    proc.wait();
    ++kills;
    std::string text = read_file(events);
    const size_t last_start = text.size() > 1 ? text.rfind('\n', text.size() - 2) + 1 : 0;
    if (text.size() - last_start > 2) {  // cut the last line inside it
      text.resize(std::uniform_int_distribution<size_t>(last_start + 1, text.size() - 2)(rng));
      write_file_atomic(events, text);
      ++cuts;
    }
  }
  const auto last = run_process(argv);
  ASSERT_EQ(last.exit_code, 0) << last.output;
  EXPECT_GE(kills, 1);
  EXPECT_GE(cuts, 1);
  std::ifstream in(events);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines)
    EXPECT_FALSE(json::parse(line, nullptr, false).is_discarded()) << "line " << lines + 1 << ": " << line;
  EXPECT_EQ(json::parse(read_file(run / "result.json"))["step"], 60);
}

// A small full file system where this process may mount one (root: a 64 KiB tmpfs filled up); elsewhere a
// file-size limit of 0 on the child (ulimit -f 0) makes every write fail the same way.
class FullDisk {
 public:
  explicit FullDisk(const fs::path& at) : at_(at) {
    fs::create_directories(at_);
    mounted_ = ::mount("tmpfs", at_.c_str(), "tmpfs", 0, "size=64k") == 0;
    if (!mounted_) return;
    std::ofstream filler(at_ / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    for (int i = 0; i < 64 && filler.write(block.data(), block.size()); ++i) filler.flush();
  }
  ~FullDisk() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  /// argv run on the full disk: as it is on the tmpfs, else under sh with the file-size limit.
  std::vector<std::string> wrap(const std::vector<std::string>& argv) const {
    if (mounted_) return argv;
    std::vector<std::string> out = {"/bin/sh", "-c", "trap '' XFSZ; ulimit -f 0; exec \"$@\"", "sh"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

 private:
  fs::path at_;
  bool mounted_ = false;
};

// Row 9: the cache is an optimisation: on a full disk the evaluation warns (in the output and in --json's
// warnings), leaves no partial file, and gives the figures it gives without a cache.
TEST(BadInputTorch, Row9AFullDiskUnderTheCacheIsAWarning) {
  ScratchDir dir;
  write_toy_beir(dir / "beir");
  write_random_model(dir / "model");
  const std::vector<std::string> eval = {RAGMIG_BINARY, "eval", "--data", (dir / "beir").string(), "--retriever",
                                         "hybrid", "--model", (dir / "model").string(), "--index", "HNSW32",
                                         "--device", "cpu", "--json"};
  auto uncached = eval;
  uncached.push_back("--no-cache");
  const auto reference = run_process(uncached);
  ASSERT_EQ(reference.exit_code, 0) << reference.output;

  const FullDisk disk(dir / "full");
  auto cached = eval;
  cached.insert(cached.end(), {"--cache", (dir / "full/cache").string()});
  const auto r = run_process(disk.wrap(cached));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::HasSubstr("ragmig eval: warning: cannot write a cache entry"));
  const json j = eval_json(r), ref = eval_json(reference);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["ndcg@10"], ref["ndcg@10"]);
  EXPECT_EQ(j["recall@100"], ref["recall@100"]);
  EXPECT_GE(j["warnings"].size(), 4u) << j["warnings"].dump(1);
  for (const char* what : {"passages", "queries", "index", "bm25_index"})
    EXPECT_EQ(j["cache"][what], "unstored") << what << ": " << j["cache"].dump();
  if (fs::exists(dir / "full/cache"))
    for (const auto& e : fs::directory_iterator(dir / "full/cache")) ADD_FAILURE() << "left behind: " << e.path();
}

// Row 15: `ragmig train` started by hand sleeps its idle OpenMP threads (they spun and slowed every other
// process on shared cores; bench/train/shared_cores.sh measures it) unless the user set how they wait.
TEST(BadInputTorch, Row15OpenMpThreadsSleepUnlessTheUserSaysOtherwise) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 240);
  write_file_atomic(dir / "cfg.toml", tiny_config(dir / "pairs.jsonl"));
  const auto policy_of = [&](const std::string& tag, const std::vector<std::string>& env) {
    std::vector<std::string> argv = {"/usr/bin/env", "-u", "OMP_WAIT_POLICY", "-u", "GOMP_SPINCOUNT"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {RAGMIG_BINARY, "train", (dir / "cfg.toml").string(), "--run-dir", (dir / tag).string(),
                             "--quiet", "--set", "train.max_steps=1"});
    const auto r = run_process(argv);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const auto& e : events_of(dir / tag))
      if (e["event"] == "start") return e["omp_wait_policy"].get<std::string>();
    return std::string("no start event");
  };
  EXPECT_EQ(policy_of("ragmig", {}), "PASSIVE");
  EXPECT_EQ(policy_of("spin", {"GOMP_SPINCOUNT=1000"}), "default");
  EXPECT_EQ(policy_of("active", {"OMP_WAIT_POLICY=ACTIVE"}), "ACTIVE");
}

// LibTorch's errors in one line: the message without the stack trace, unless asked for.
TEST(BadInputTorch, LibTorchErrorsAreOneLineWithoutTheirStackTrace) {
  try {
    (void)torch::ones({2}).view({3});
    FAIL() << "view did not throw";
  } catch (const c10::Error& e) {
    const std::string line = model::describe_torch_error(e, false);
    EXPECT_EQ(line.rfind("LibTorch: shape '[3]' is invalid for input of size 2", 0), 0u) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_THAT(line, ::testing::HasSubstr("RAGMIG_DEBUG=1"));
    EXPECT_EQ(model::describe_torch_error(e, true), std::string("LibTorch: ") + e.what());
  }
}

}  // namespace
}  // namespace ragmig::testing
