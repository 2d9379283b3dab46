// Where the loop stands, through a real checkpoint archive: everything back, and a checkpoint from before
// batch resizes (no batch plan) keeps train.batch_size.
#include "train/loop_position.h"

#include <gtest/gtest.h>

#include "train/checkpoint_store.h"
#include "support/test_support.h"

namespace ragmig::train {
namespace {

TEST(LoopPosition, ComesBackWholeFromACheckpoint) {
  testing::ScratchDir dir;
  CheckpointStore store((dir / "ck").string(), 2);
  TrainOptions t;
  t.batch_size = 64;
  t.chunk_size = 16;
  LoopPosition saved = LoopPosition::start(t);
  EXPECT_EQ(saved.global_batch, 64);
  EXPECT_EQ(saved.epoch_batch, 64);
  EXPECT_EQ(saved.chunk, 16);
  saved.step = 1234;
  saved.epoch = 3;
  saved.batch_in_epoch = 17;
  saved.samples = 70'001;
  saved.global_batch = 48;
  saved.chunk = 8;
  saved.epoch_resizes = {{5, 32}, {11, 48}};
  store.save(saved.step, [&](torch::serialize::OutputArchive& ar) { saved.write(ar); });

  LoopPosition back = LoopPosition::start(t);
  ASSERT_TRUE(store.load_newest([&](torch::serialize::InputArchive& ar) { back.read(ar); }));
  EXPECT_EQ(back.step, 1234);
  EXPECT_EQ(back.epoch, 3);
  EXPECT_EQ(back.batch_in_epoch, 17);
  EXPECT_EQ(back.samples, 70'001);
  EXPECT_EQ(back.global_batch, 48);
  EXPECT_EQ(back.chunk, 8);
  EXPECT_EQ(back.epoch_batch, 64);
  ASSERT_EQ(back.epoch_resizes.size(), 2u);
  EXPECT_EQ(back.epoch_resizes[1].position, 11);
  EXPECT_EQ(back.epoch_resizes[1].batch_size, 48);

  // No resize yet: an empty plan comes back empty.
  saved.epoch_resizes.clear();
  store.save(saved.step + 1, [&](torch::serialize::OutputArchive& ar) { saved.write(ar); });
  ASSERT_TRUE(store.load_newest([&](torch::serialize::InputArchive& ar) { back.read(ar); }));
  EXPECT_EQ(back.step, 1234);
  EXPECT_TRUE(back.epoch_resizes.empty());
}

TEST(LoopPosition, ACheckpointWithoutABatchPlanKeepsTheConfigured) {
  testing::ScratchDir dir;
  CheckpointStore store((dir / "ck").string(), 2);
  store.save(40, [](torch::serialize::OutputArchive& ar) {
    for (const char* key : {"step", "epoch", "batch_in_epoch", "samples"}) ar.write(key, torch::tensor(int64_t{40}));
  });
  TrainOptions t;
  t.batch_size = 24;
  LoopPosition back = LoopPosition::start(t);
  ASSERT_TRUE(store.load_newest([&](torch::serialize::InputArchive& ar) { back.read(ar); }));
  EXPECT_EQ(back.step, 40);
  EXPECT_EQ(back.samples, 40);
  EXPECT_EQ(back.global_batch, 24);
  EXPECT_EQ(back.epoch_batch, 24);
  EXPECT_TRUE(back.epoch_resizes.empty());
}

}  // namespace
}  // namespace ragmig::train
