// Length-grouped batches in a real `ragmig train` run: the progress events' padding share falls against
// plain shuffled batches on the same SQuAD pairs (whose paragraphs run from ~30 to over 300 tokens).
// Bit-exact resume with grouping is in test_resume.cpp; the batching rules in tests/text.
#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "train_fixture.h"

namespace ragmig::testing {
namespace {

// The mean of the progress events' "padding" of a 15-step run (15 batches of 16 drawn from 1,600 pairs).
double mean_padding(const std::filesystem::path& dir, int64_t length_grouping) {
  const auto run = dir / ("run-" + std::to_string(length_grouping));
  auto r = run_ragmig({"train", (dir / "cfg.toml").string(), "--run-dir", run.string(), "--quiet", "--set",
                       "train.max_steps=15", "--set", "train.hard_negatives=0", "--set", "train.checkpoint_every=0",
                       "--set", "train.length_grouping=" + std::to_string(length_grouping)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(run / "events.jsonl");
  std::string line;
  double sum = 0;
  int n = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j["event"] != "progress") continue;
    EXPECT_TRUE(j.contains("padding")) << line;
    sum += j.value("padding", 0.0);
    ++n;
  }
  EXPECT_EQ(n, 15);
  return n ? sum / n : 0;
}

TEST(LengthGrouping, PadsLessThanPlainBatches) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  ScratchDir dir;
  write_squad_pairs(dir / "pairs.jsonl", 1600);
  std::string cfg = tiny_config(dir / "pairs.jsonl");
  // Room for whole paragraphs: SQuAD's run from ~30 to over 300 tokens.
  cfg.replace(cfg.find("max_passage_tokens = 64"), 23, "max_passage_tokens = 384");
  cfg.replace(cfg.find("max_position = 64"), 17, "max_position = 384");
  write_file_atomic(dir / "cfg.toml", cfg);
  const double plain = mean_padding(dir.path(), 0), grouped = mean_padding(dir.path(), 50);
  RecordProperty("padding_plain", std::to_string(plain));
  RecordProperty("padding_grouped", std::to_string(grouped));
  std::printf("padding share: plain %.3f, grouped %.3f\n", plain, grouped);
  EXPECT_GT(plain, 0.3);  // paragraphs of uneven length pad much when shuffled
  EXPECT_LT(grouped, plain / 2);
}

}  // namespace
}  // namespace ragmig::testing
