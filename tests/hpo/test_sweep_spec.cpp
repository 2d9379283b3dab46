// Sweep files: the example parses to the expected struct, every required key and every kind of bad value is
// an error naming file, table and key, to_json is stable, and 2,000 mutated files never escape as anything
// but a ragmig::Error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/config_table.h"
#include "core/error.h"
#include "core/splitmix.h"
#include "hpo/sweep_spec.h"
#include "train/train_config.h"
#include "support/text_mutation.h"

namespace ragmig::hpo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kExample = R"([sweep]
name = "squad-tiny"
base = "train-squad-tiny.toml"
set = ["train.max_steps=300", "train.batch_size=32"]
search = "random"
trials = 8
seed = 7
slots = "cpu:1"
policy = "fifo"

[space]
"train.lr" = { log_uniform = [1e-4, 3e-3] }
"train.temperature" = { uniform = [0.02, 0.1] }
model.layers = { int = [1, 3] }
"model.pooling" = { choice = ["mean", "cls"] }

[eval]
data = "../shared/data/beir/squad-train"
split = "test"
metric = "ndcg@10"
max_queries = 1000

[asha]
min_steps = 25
reduction_factor = 3
queries = 300
passages = 2000
)";

const std::string kPath = "/work/sweeps/squad-tiny.toml";

// The example with `from` replaced by `to`; `from` must be there, so a typo cannot make a test vacuous.
std::string edited(const std::string& from, const std::string& to) {
  const auto at = kExample.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return kExample;
  return kExample.substr(0, at) + to + kExample.substr(at + from.size());
}

std::string error_of(const std::string& text, const std::string& path = kPath) {
  try {
    parse_sweep(text, path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SweepSpec, ExampleParses) {
  const SweepSpec s = parse_sweep(kExample, kPath);
  EXPECT_EQ(s.path, kPath);
  EXPECT_EQ(s.name, "squad-tiny");
  EXPECT_EQ(s.base, "/work/sweeps/train-squad-tiny.toml");
  EXPECT_EQ(s.set, (std::vector<std::string>{"train.max_steps=300", "train.batch_size=32"}));
  EXPECT_EQ(s.search, SearchKind::Random);
  EXPECT_EQ(s.trials, 8);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.slots, "cpu:1");
  EXPECT_EQ(s.policy, "fifo");
  EXPECT_EQ(s.priority, 0);
  ASSERT_EQ(s.space.params.size(), 4u);
  EXPECT_EQ(s.space.params[0].key, "model.layers");
  EXPECT_EQ(s.space.params[0].kind, ParamKind::Int);
  EXPECT_EQ(s.space.params[0].low, 1);
  EXPECT_EQ(s.space.params[0].high, 3);
  EXPECT_EQ(s.space.params[1].key, "model.pooling");
  EXPECT_EQ(s.space.params[1].choices, (std::vector<json>{"mean", "cls"}));
  EXPECT_EQ(s.space.params[2].key, "train.lr");
  EXPECT_EQ(s.space.params[2].kind, ParamKind::LogUniform);
  EXPECT_EQ(s.space.params[2].low, 1e-4);
  EXPECT_EQ(s.space.params[2].high, 3e-3);
  EXPECT_EQ(s.space.params[3].key, "train.temperature");
  EXPECT_EQ(s.space.params[3].kind, ParamKind::Uniform);
  EXPECT_EQ(s.eval.data, "../shared/data/beir/squad-train");
  EXPECT_EQ(s.eval.split, "test");
  EXPECT_EQ(s.eval.metric, "ndcg@10");
  EXPECT_EQ(s.eval.max_queries, 1000);
  EXPECT_EQ(s.asha.min_steps, 25);
  EXPECT_EQ(s.asha.reduction_factor, 3.0);
  EXPECT_EQ(s.asha.queries, 300);
  EXPECT_EQ(s.asha.passages, 2000);
  EXPECT_EQ(s.asha.order, "trial");  // reproducible decisions unless asked otherwise
  EXPECT_EQ(s.eval.fusion, "");      // each model alone, no baselines, unless asked
  EXPECT_TRUE(s.eval.baselines.empty());
}

TEST(SweepSpec, FusionAndBaselines) {
  const SweepSpec s = parse_sweep(
      edited("max_queries = 1000", "max_queries = 1000\nfusion = \"auto\"\nbaselines = [\"zero-shot\", \"bm25\"]"), kPath);
  EXPECT_EQ(s.eval.fusion, "auto");
  EXPECT_EQ(s.eval.baselines, (std::vector<std::string>{"zero-shot", "bm25"}));  // in the order given
  // Part of what pins a state folder, but only when given: folders pinned before these keys existed still match.
  const json j = to_json(s);
  EXPECT_EQ(j["eval"]["fusion"], "auto");
  EXPECT_EQ(j["eval"]["baselines"], (json{"zero-shot", "bm25"}));
  const json plain = to_json(parse_sweep(kExample, kPath));
  EXPECT_FALSE(plain["eval"].contains("fusion"));
  EXPECT_FALSE(plain["eval"].contains("baselines"));
  EXPECT_FALSE(plain["eval"].contains("dimensions"));
}

// [eval] dimensions: every model scored with the leading N dimensions (a Matryoshka sweep at the size it serves).
TEST(SweepSpec, EvalDimensions) {
  EXPECT_EQ(parse_sweep(kExample, kPath).eval.dimensions, 0) << "each folder's own size unless asked";
  const SweepSpec s = parse_sweep(edited("max_queries = 1000", "max_queries = 1000\ndimensions = 64"), kPath);
  EXPECT_EQ(s.eval.dimensions, 64);
  EXPECT_EQ(to_json(s)["eval"]["dimensions"], 64) << "part of what pins a state folder";
  try {
    parse_sweep(edited("max_queries = 1000", "max_queries = 1000\ndimensions = -8"), kPath);
    ADD_FAILURE() << "accepted dimensions = -8";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dimensions"), std::string::npos) << e.what();
  }
}

// The sweeps under examples/ (`make demo` runs one) parse, and every trial resolves through the training
// config table as `ragmig batch` resolves it before anything runs.
TEST(SweepSpec, EveryExampleSweepResolves) {
  int sweeps = 0;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(RAGMIG_SOURCE_DIR) / "examples")) files.push_back(entry.path());
  files.push_back(fs::path(RAGMIG_SOURCE_DIR) / "examples/slurm/sweep.toml");
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    if ((name.rfind("sweep-", 0) != 0 && name != "sweep.toml") || path.extension() != ".toml") continue;
    ++sweeps;
    SCOPED_TRACE(name);
    const SweepSpec spec = read_sweep_file(path.string());
    const auto trials = sample(spec.space, spec.search, spec.trials, spec.seed);
    ASSERT_FALSE(trials.empty());
    for (const auto& params : trials) {
      train::TrainConfig cfg;
      ConfigTable table = train::make_config_table(cfg);
      table.load_file(spec.base);
      for (const auto& s : spec.set) table.apply_override(s);
      for (const auto& [key, value] : params) table.apply_override(to_override(key, value));
      EXPECT_NO_THROW(train::validate(cfg));
    }
  }
  EXPECT_GE(sweeps, 4);  // scifact-minilm, squad-tiny, squad-mig, slurm/sweep
}

TEST(SweepSpec, DefaultsAndPaths) {
  const std::string minimal =
      "[sweep]\nbase = \"../t.toml\"\ntrials = 2\n[space]\n\"a.b\" = { int = [1, 2] }\n"
      "[eval]\ndata = \"beir/x\"\n";
  const SweepSpec s = parse_sweep(minimal, "/w/sweeps/my-sweep.v2.toml");
  EXPECT_EQ(s.name, "my-sweep.v2");
  EXPECT_EQ(s.base, "/w/t.toml");  // lexically normalised
  EXPECT_EQ(s.slots, "cpu:1");
  EXPECT_EQ(s.policy, "fifo");
  EXPECT_EQ(s.eval.split, "test");
  EXPECT_EQ(s.eval.metric, "ndcg@10");
  EXPECT_EQ(s.asha.min_steps, 0);
  EXPECT_EQ(s.asha.reduction_factor, 3.0);
  EXPECT_EQ(parse_sweep(minimal, "rel/s.toml").base, (fs::current_path() / "t.toml").lexically_normal().string());
  EXPECT_EQ(parse_sweep(edited("\"train-squad-tiny.toml\"", "\"/abs/t.toml\""), kPath).base, "/abs/t.toml");
  // A grid needs no trials; the example's space has a log_uniform, so use a discrete one.
  const SweepSpec g = parse_sweep(
      "[sweep]\nbase = \"t.toml\"\nsearch = \"grid\"\n[space]\n\"a.b\" = { int = [1, 3] }\n"
      "\"a.c\" = { choice = [true, false] }\n[eval]\ndata = \"d\"\n",
      kPath);
  EXPECT_EQ(g.search, SearchKind::Grid);
  EXPECT_EQ(g.trials, 0);
  EXPECT_EQ(sample(g.space, g.search, g.trials, g.seed).size(), 6u);
}

TEST(SweepSpec, MissingRequiredKeysAreNamed) {
  struct Case {
    std::string from, to, expected;
  };
  const std::vector<Case> cases = {
      {"base = \"train-squad-tiny.toml\"\n", "", "[sweep] base: required"},
      {"trials = 8\n", "", "[sweep] trials: required for search = \"random\""},
      {"data = \"../shared/data/beir/squad-train\"\n", "", "[eval] data: required"},
      {"[space]\n\"train.lr\" = { log_uniform = [1e-4, 3e-3] }\n\"train.temperature\" = { uniform = [0.02, 0.1] }\n"
       "model.layers = { int = [1, 3] }\n\"model.pooling\" = { choice = [\"mean\", \"cls\"] }\n",
       "", "[space]: required table missing"},
      {"[eval]\n", "[asha2]\n", "unknown table \"asha2\""},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(edited(c.from, c.to));
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
    EXPECT_EQ(message.rfind(kPath + ": ", 0), 0u) << message;
  }
  EXPECT_NE(error_of("[space]\n\"a.b\" = { int = [1, 2] }\n[eval]\ndata = \"d\"\n").find("[sweep]: required table"),
            std::string::npos);
  EXPECT_NE(error_of("[sweep]\nbase = \"t\"\ntrials = 1\n[space]\n\"a.b\" = { int = [1, 2] }\n")
                .find("[eval]: required table"),
            std::string::npos);
}

TEST(SweepSpec, BadValuesAreNamed) {
  struct Case {
    std::string from, to, expected;
  };
  const std::vector<Case> cases = {
      {"[asha]\n", "[extra]\nx = 1\n[asha]\n", "unknown table \"extra\""},
      {"[sweep]\n", "stray = 1\n[sweep]\n", "unknown key \"stray\""},
      {"seed = 7\n", "seed = 7\nfoo = 1\n", "[sweep] foo: unknown key (known: name, base"},
      {"split = \"test\"\n", "split = \"test\"\nk = 10\n", "[eval] k: unknown key"},
      {"passages = 2000\n", "passages = 2000\neta = 3\n", "[asha] eta: unknown key"},
      {"trials = 8", "trials = \"8\"", "[sweep] trials: expected an integer >= 0 (got a string \"8\")"},
      {"trials = 8", "trials = 0", "[sweep] trials: expected an integer >= 1 for search = \"random\""},
      {"trials = 8", "trials = 1000000", "[sweep] trials: expected at most 100000"},
      {"seed = 7", "seed = -1", "[sweep] seed: expected an integer >= 0 (got -1)"},
      {"seed = 7", "seed = 7.5", "[sweep] seed: expected an integer"},
      {"seed = 7", "seed = 7\nmin_batch_fraction = 0", "[sweep] min_batch_fraction: expected a share of the batch in (0, 1] (got 0)"},
      {"seed = 7", "seed = 7\nmin_batch_fraction = 1.5", "[sweep] min_batch_fraction: expected a share"},
      {"name = \"squad-tiny\"", "name = \"a b\"", "[sweep] name: expected letters"},
      {"name = \"squad-tiny\"", "name = 3", "[sweep] name: expected a string (got an integer 3)"},
      {"base = \"train-squad-tiny.toml\"", "base = \"\"", "[sweep] base:"},
      {"set = [\"train.max_steps=300\", ", "set = [\"train.max_steps\", ",
       "[sweep] set: expected \"section.key=value\""},
      {"set = [\"train.max_steps=300\", ", "set = [\"steps=300\", ", "[sweep] set: expected \"section.key=value\""},
      {"set = [\"train.max_steps=300\", ", "set = [1, ", "[sweep] set: expected an array of strings"},
      {"set = [\"train.max_steps=300\", ", "set = [\"train.batch_size=8\", ",
       "[sweep] set: sets \"train.batch_size\" twice"},
      {"search = \"random\"", "search = \"bayes\"", "[sweep] search: expected \"grid\" or \"random\" (got \"bayes\")"},
      {"slots = \"cpu:1\"", "slots = \"gpu:x\"", "[sweep] slots:"},
      {"policy = \"fifo\"", "policy = \"nosuch\"", "[sweep] policy: unknown policy 'nosuch'"},
      {"policy = \"fifo\"", "policy = \"fifo(\"", "[sweep] policy:"},
      {"policy = \"fifo\"", "priority = \"high\"", "[sweep] priority: expected an integer"},
      {"\"train.lr\" = { log_uniform", "\"train.max_steps\" = { int = [100, 300] }\n\"train.lr\" = { log_uniform",
       "[space] \"train.max_steps\": cannot be searched"},
      {"\"train.lr\" = { log_uniform", "\"train.batch_size\" = { choice = [16, 64] }\n\"train.lr\" = { log_uniform",
       "[space] \"train.batch_size\": is also fixed in [sweep] set"},
      {"search = \"random\"", "search = \"grid\"", "\"train.lr\" is log_uniform, which has no grid"},
      {"metric = \"ndcg@10\"", "metric = \"ndcg\"", "[eval] metric: expected name@k with k >= 1"},
      {"metric = \"ndcg@10\"", "metric = \"ndcg@0\"", "[eval] metric: expected name@k"},
      {"metric = \"ndcg@10\"", "metric = \"@10\"", "[eval] metric: expected name@k"},
      {"metric = \"ndcg@10\"", "metric = \"ndcg@x1\"", "[eval] metric: expected name@k"},
      {"max_queries = 1000", "max_queries = -5", "[eval] max_queries: expected an integer >= 0"},
      {"split = \"test\"", "split = \"\"", "[eval] split:"},
      {"max_queries = 1000", "fusion = \"\"", "[eval] fusion: expected \"auto\" or a fusion like \"RRF(k=60)\""},
      {"max_queries = 1000", "fusion = 0.5", "[eval] fusion: expected a string"},
      {"max_queries = 1000", "baselines = \"bm25\"", "[eval] baselines: expected an array of strings"},
      {"max_queries = 1000", "baselines = [\"bm25\", \"dpr\"]",
       "[eval] baselines: expected \"bm25\" or \"zero-shot\" entries (got \"dpr\")"},
      {"max_queries = 1000", "baselines = [\"bm25\", \"bm25\"]", "[eval] baselines: names \"bm25\" twice"},
      {"min_steps = 25", "min_steps = -1", "[asha] min_steps: expected an integer >= 0"},
      {"reduction_factor = 3", "reduction_factor = 1", "[asha] reduction_factor: expected a number > 1 (got 1)"},
      {"reduction_factor = 3", "reduction_factor = \"3\"", "[asha] reduction_factor: expected a number"},
      {"queries = 300", "queries = 0", "[asha] queries: expected an integer >= 1"},
      {"passages = 2000", "passages = -1", "[asha] passages: expected an integer >= 0"},
      {"passages = 2000", "passages = 2000\norder = \"first\"", "[asha] order: expected \"trial\" or \"arrival\" (got \"first\")"},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(edited(c.from, c.to));
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.to << "\n  -> " << message;
    EXPECT_EQ(message.rfind(kPath, 0), 0u) << message;
  }
}

TEST(SweepSpec, SyntaxErrorNamesTheLine) {
  const std::string message = error_of(edited("seed = 7", "seed = = 7"));
  EXPECT_EQ(message.rfind(kPath + ":7:", 0), 0u) << message;
}

TEST(SweepSpec, ReadsFilesAndReportsUnreadableOnes) {
  const fs::path dir = fs::path(::testing::TempDir()) / "ragmig_hpo_sweep";
  fs::create_directories(dir);
  const fs::path file = dir / "squad-tiny.toml";
  std::ofstream(file) << kExample;
  const SweepSpec s = read_sweep_file(file.string());
  EXPECT_EQ(s.base, (dir / "train-squad-tiny.toml").lexically_normal().string());
  EXPECT_EQ(to_json(s), to_json(parse_sweep(kExample, file.string())));
  EXPECT_THROW(read_sweep_file((dir / "missing.toml").string()), IoError);
  fs::remove_all(dir);
}

TEST(SweepSpec, JsonIsStable) {
  const json j = to_json(parse_sweep(kExample, kPath));
  EXPECT_EQ(j, to_json(parse_sweep(kExample, kPath)));
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["search"], "random");
  EXPECT_EQ(j["base"], "/work/sweeps/train-squad-tiny.toml");
  EXPECT_EQ(j["space"][0], (json{{"key", "model.layers"}, {"kind", "int"}, {"low", 1}, {"high", 3}}));
  EXPECT_EQ(j["space"][2]["kind"], "log_uniform");
  EXPECT_EQ(j["asha"]["min_steps"], 25);
  EXPECT_EQ(j["eval"]["metric"], "ndcg@10");
  EXPECT_FALSE(j.contains("path"));
  EXPECT_FALSE(j.contains("priority"));
  // The order of [space] entries in the file, the path it was reached by and the priority do not matter; a key
  // that changes the trials does.
  const std::string permuted =
      edited("\"train.lr\" = { log_uniform = [1e-4, 3e-3] }\n\"train.temperature\" = { uniform = [0.02, 0.1] }\n",
             "\"train.temperature\" = { uniform = [0.02, 0.1] }\n\"train.lr\" = { log_uniform = [1e-4, 3e-3] }\n");
  EXPECT_EQ(to_json(parse_sweep(permuted, kPath)), j);
  EXPECT_EQ(to_json(parse_sweep(edited("policy = \"fifo\"", "policy = \"fifo\"\npriority = 5"), kPath)), j);
  EXPECT_EQ(to_json(parse_sweep(kExample, "/elsewhere/../work/sweeps/squad-tiny.toml")), j);
  EXPECT_NE(to_json(parse_sweep(edited("seed = 7", "seed = 8"), kPath)), j);
  EXPECT_NE(to_json(parse_sweep(edited("model.layers = { int = [1, 3] }\n", ""), kPath)), j);
  EXPECT_NE(to_json(parse_sweep(edited("min_steps = 25", "min_steps = 20"), kPath)), j);
  EXPECT_EQ(j.dump(), to_json(parse_sweep(kExample, kPath)).dump());
}

TEST(SweepSpec, FuzzedFilesParseOrThrowRagmigErrors) {
  int parsed = 0, rejected = 0;
  for (uint64_t i = 0; i < 2000; ++i) {
    uint64_t h = splitmix64(i ^ 0x5eed);
    std::string text = kExample;
    const int edits = 1 + static_cast<int>(splitmix64(h) % 4);
    for (int e = 0; e < edits; ++e) text = testing::mutate(text, h);
    try {
      const SweepSpec s = parse_sweep(text, kPath);
      // What a caller does next must not throw either.
      (void)to_json(s).dump();
      (void)sample(s.space, s.search, std::min<int64_t>(s.trials, 100), s.seed);
      ++parsed;
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "mutation " << i << " escaped as " << e.what() << "\n" << text;
    }
  }
  EXPECT_GT(parsed, 50);
  EXPECT_GT(rejected, 500);
}

}  // namespace
}  // namespace ragmig::hpo
