// Checkpoints: atomic pairs of archive + manifest, newest valid one wins, corrupt ones are skipped.
#include "train/checkpoint_store.h"

#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "support/test_support.h"

namespace ragmig::train {
namespace {

void save_value(CheckpointStore& store, int64_t step, float value) {
  store.save(step, [&](torch::serialize::OutputArchive& ar) { ar.write("x", torch::full({3}, value)); });
}

float load_value(const CheckpointStore& store, int64_t* step = nullptr) {
  float v = -1;
  auto loaded = store.load_newest([&](torch::serialize::InputArchive& ar) {
    torch::Tensor t;
    ar.read("x", t);
    v = t[0].item<float>();
  });
  if (step) *step = loaded ? loaded->step : -1;
  return v;
}

// The manifest keeps the config that shaped the weights (the resume rule checks it when config.json is gone);
// manifests of an older ragmig have none.
TEST(CheckpointStore, ManifestsKeepTheConfigOfTheirWeights) {
  testing::ScratchDir dir;
  CheckpointStore store((dir / "ck").string(), 3);
  save_value(store, 10, 1.0f);
  EXPECT_FALSE(store.newest_config().has_value());
  const nlohmann::json config = {{"model", {{"hidden_size", 32}}}};
  store.save(20, [&](torch::serialize::OutputArchive& ar) { ar.write("x", torch::full({3}, 2.0f)); }, config);
  save_value(store, 30, 3.0f);
  ASSERT_TRUE(store.newest_config().has_value());
  EXPECT_EQ(*store.newest_config(), config) << "the newest manifest that has one";
  write_file_atomic(dir / "ck/ckpt-000000040.json", "{not json");
  EXPECT_EQ(*store.newest_config(), config) << "an unreadable manifest is passed over";
}

TEST(CheckpointStore, NewestWinsAndOldOnesArePruned) {
  testing::ScratchDir dir;
  CheckpointStore store((dir / "ck").string(), 2);
  int64_t step = 0;
  EXPECT_EQ(load_value(store, &step), -1);  // none yet
  EXPECT_EQ(step, -1);
  save_value(store, 10, 1.0f);
  save_value(store, 20, 2.0f);
  save_value(store, 30, 3.0f);
  EXPECT_EQ(store.steps(), (std::vector<int64_t>{30, 20}));
  EXPECT_EQ(load_value(store, &step), 3.0f);
  EXPECT_EQ(step, 30);
  EXPECT_FALSE(std::filesystem::exists(dir / "ck/ckpt-000000010.pt"));
  // Names that only look like a checkpoint's are not steps ("00000002a" is not step 2).
  write_file_atomic(dir / "ck/ckpt-00000002a.json", "{}");
  write_file_atomic(dir / "ck/ckpt-0000000-2.json", "{}");
  EXPECT_EQ(store.steps(), (std::vector<int64_t>{30, 20}));
}

TEST(CheckpointStore, CorruptNewestFallsBackToOlder) {
  testing::ScratchDir dir;
  CheckpointStore store((dir / "ck").string(), 3);
  save_value(store, 1, 1.0f);
  save_value(store, 2, 2.0f);
  // Flip one byte of the newest archive: the CRC no longer matches.
  const auto newest = dir / "ck/ckpt-000000002.pt";
  std::string bytes = read_file(newest);
  bytes[bytes.size() / 2] ^= 0x5a;
  write_file_atomic(newest, bytes);
  int64_t step = 0;
  auto loaded = store.load_newest([](torch::serialize::InputArchive&) {});
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 1);
  ASSERT_EQ(loaded->skipped.size(), 1u);
  EXPECT_NE(loaded->skipped[0].find("checksum"), std::string::npos);
  EXPECT_EQ(load_value(store, &step), 1.0f);
}

TEST(CheckpointStore, TruncatedArchiveAndOnlyInvalidOnesAreReported) {
  testing::ScratchDir dir;
  CheckpointStore store((dir / "ck").string(), 3);
  save_value(store, 5, 5.0f);
  const auto path = dir / "ck/ckpt-000000005.pt";
  std::string bytes = read_file(path);
  write_file_atomic(path, bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(load_value(store), IoError);  // never silently start over when state exists
}

TEST(CheckpointStore, ArchiveWithoutManifestIsIgnored) {
  testing::ScratchDir dir;
  CheckpointStore store((dir / "ck").string(), 3);
  save_value(store, 1, 1.0f);
  save_value(store, 2, 2.0f);
  std::filesystem::remove(dir / "ck/ckpt-000000002.json");  // as if killed between the two writes
  EXPECT_EQ(load_value(store), 1.0f);
}

}  // namespace
}  // namespace ragmig::train
