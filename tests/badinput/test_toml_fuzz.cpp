// The TOML files users hand ragmig, fuzzed by structure (support/toml_variants.h): every place of every example
// and seed — sweep files with their [alerts] and [slurm] tables, job files, alert configs, training configs — given
// values of every type and edge. Each variant is read as its command reads it and is either accepted or refused
// with a ConfigError that names the file and the key edited; nothing else escapes. RAGMIG_TOML_FUZZ_PRINT=1 prints
// every refusal, to read what users are told.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "core/error.h"
#include "exec/slurm_config.h"
#include "hpo/sweep_spec.h"
#include "monitor/alert_config.h"
#include "sched/job.h"
#include "support/test_support.h"
#include "support/toml_variants.h"
#include "train/train_config.h"

namespace ragmig {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> seeds(const std::vector<std::string>& globs) {
  std::vector<fs::path> out;
  for (const std::string& g : globs) {
    const fs::path dir = fs::path(RAGMIG_SOURCE_DIR) / fs::path(g).parent_path();
    const std::string prefix = fs::path(g).filename().string();
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (e.path().extension() == ".toml" && (prefix == "*" || name.rfind(prefix, 0) == 0)) out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Tally {
  int variants = 0, accepted = 0, refused = 0;
};

// Every structured variant of every seed, read by `read(text, path)`: accepted, or a ConfigError naming `path` and
// the key edited. `path` is where the variant was written (readers of files are given the file).
Tally fuzz(const std::vector<fs::path>& files, const std::function<void(const std::string&, const std::string&)>& read) {
  EXPECT_FALSE(files.empty());
  Tally tally;
  const testing::ScratchDir dir;
  int valid = 0;
  for (const fs::path& seed : files) {
    // Fuzz corpora hold bad inputs too: the variants are of the seeds their reader accepts.
    toml::table root;
    try {
      root = toml::parse(read_text(seed), seed.string());
      read(read_text(seed), seed.string());
    } catch (const std::exception&) {
      continue;
    }
    ++valid;
    const std::string path = (dir.path() / seed.filename()).string();
    testing::for_each_toml_variant(root, [&](const std::string& text, const testing::TomlPlace& at,
                                             const std::string& value) {
      ++tally.variants;
      std::ofstream(path, std::ios::trunc) << text;
      const std::string what = seed.filename().string() + ": " + testing::toml_place_text(at) + " = " + value;
      try {
        read(text, path);
        ++tally.accepted;
      } catch (const ConfigError& e) {
        ++tally.refused;
        const std::string message = e.what();
        if (std::getenv("RAGMIG_TOML_FUZZ_PRINT")) std::printf("%s\n    %s\n", what.c_str(), message.c_str());
        if (message.find(path) == std::string::npos)
          ADD_FAILURE() << what << ": the error does not name the file: " << message;
        if (message.find(testing::toml_place_key(at)) == std::string::npos)
          ADD_FAILURE() << what << ": the error does not name the key '" << testing::toml_place_key(at)
                        << "': " << message;
      } catch (const std::exception& e) {
        ADD_FAILURE() << what << ": escaped as " << typeid(e).name() << ": " << e.what();
      }
      return !::testing::Test::HasFailure();  // the first finding is enough to read
    });
  }
  std::printf("%d of %zu files valid, %d variants: %d accepted, %d refused\n", valid, files.size(), tally.variants,
              tally.accepted, tally.refused);
  EXPECT_GT(valid, 0);
  return tally;
}

TEST(TomlFuzz, SweepFiles) {
  const Tally t = fuzz(seeds({"examples/sweep-", "examples/slurm/sweep", "fuzz/corpus/sweep/*"}),
                       [](const std::string& text, const std::string& path) {
                         const auto spec = hpo::parse_sweep(text, path);
                         (void)hpo::to_json(spec).dump();
                         (void)monitor::parse_alert_config(text, path);
                         (void)exec::merge_slurm_table(text, path, {});
                       });
  EXPECT_GT(t.refused, 0);
  EXPECT_GT(t.accepted, 0);
}

TEST(TomlFuzz, JobFiles) {
  const Tally t = fuzz(seeds({"fuzz/corpus/job_file/*"}), [](const std::string&, const std::string& path) {
    const auto spec = sched::read_job_file(path);
    (void)sched::job_spec_from_json(sched::to_json(spec), path);
  });
  EXPECT_GT(t.refused, 0);
  EXPECT_GT(t.accepted, 0);
}

TEST(TomlFuzz, AlertConfigs) {
  const Tally t = fuzz(seeds({"fuzz/corpus/alert_config/*"}),
                       [](const std::string& text, const std::string& path) { (void)monitor::parse_alert_config(text, path); });
  EXPECT_GT(t.refused, 0);
  EXPECT_GT(t.accepted, 0);
}

// As `ragmig train CONFIG` reads it: the file through the key table, then validate().
TEST(TomlFuzz, TrainingConfigs) {
  const Tally t = fuzz(seeds({"examples/train-", "examples/finetune-", "examples/lora-", "examples/pretrain-",
                              "fuzz/corpus/train_config/*"}),
                       [](const std::string&, const std::string& path) {
                         nlohmann::json resolved;
                         (void)train::read_train_config(path, {}, &resolved);
                         (void)resolved.dump();
                       });
  EXPECT_GT(t.refused, 0);
  EXPECT_GT(t.accepted, 0);
}

}  // namespace
}  // namespace ragmig
