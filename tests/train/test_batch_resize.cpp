// The pure parts of a Resize: the rest of an epoch cut again at another size, the LR rule, and control.json
// read and watched as the trainer does between steps.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "support/test_support.h"
#include "text/batch_sampler.h"
#include "train/batch_resize.h"
#include "train/control_file.h"

namespace ragmig::train {
namespace {

// 300 examples over 120 positives (some repeated), as a length-grouped epoch would batch them.
std::vector<int64_t> keys() {
  std::vector<int64_t> k;
  for (int64_t i = 0; i < 300; ++i) k.push_back((i * 7) % 120);
  return k;
}

TEST(BatchResize, TakenBatchesStayAndTheRestIsCutAgainWithoutRepeatingAKey) {
  const auto k = keys();
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < 300; ++i) lengths.push_back(10 + (i * 13) % 90);
  const auto epoch = text::length_grouped_batches(k, lengths, 16, 4, 7, 0);
  for (const int64_t size : {2, 5, 16, 24, 40}) {
    for (const int64_t position : {int64_t{0}, int64_t{3}, static_cast<int64_t>(epoch.size())}) {
      const auto out = rebatch_rest(epoch, position, k, size);
      SCOPED_TRACE(::testing::Message() << "size " << size << " at " << position);
      ASSERT_GE(out.size(), static_cast<size_t>(position));
      std::multiset<int64_t> before, after;
      for (size_t b = 0; b < epoch.size(); ++b) {
        if (b < static_cast<size_t>(position)) EXPECT_EQ(out[b], epoch[b]);
        else before.insert(epoch[b].begin(), epoch[b].end());
      }
      for (size_t b = static_cast<size_t>(position); b < out.size(); ++b) {
        EXPECT_EQ(out[b].size(), static_cast<size_t>(size));
        std::set<int64_t> seen;
        for (int64_t x : out[b]) EXPECT_TRUE(seen.insert(k[static_cast<size_t>(x)]).second) << "key twice in a batch";
        after.insert(out[b].begin(), out[b].end());
      }
      // Nothing new, nothing twice; what is dropped cannot fill a batch of its own plus the keys' deferrals.
      for (int64_t x : after) EXPECT_EQ(before.count(x), after.count(x));
      EXPECT_LT(before.size() - after.size(), static_cast<size_t>(2 * size));
      EXPECT_EQ(rebatch_rest(epoch, position, k, size), out) << "a pure function";
    }
  }
}

TEST(BatchResize, ShrinkingKeepsEachOldBatchTogether) {
  // Cut to half the size, a length-grouped epoch's batches split in place: each new batch comes from one old one.
  std::vector<int64_t> k(256), lengths(256);
  for (int64_t i = 0; i < 256; ++i) k[static_cast<size_t>(i)] = i, lengths[static_cast<size_t>(i)] = i % 50;
  const auto epoch = text::length_grouped_batches(k, lengths, 16, 4, 3, 1);
  const auto out = rebatch_rest(epoch, 2, k, 8);
  for (size_t b = 2; b < out.size(); ++b) {
    const auto& old = epoch[2 + (b - 2) / 2];
    const std::set<int64_t> from(old.begin(), old.end());
    for (int64_t x : out[b]) EXPECT_TRUE(from.count(x)) << "batch " << b;
  }
}

TEST(BatchResize, LrRules) {
  EXPECT_DOUBLE_EQ(lr_scale("sqrt", 16, 64), 0.5);
  EXPECT_DOUBLE_EQ(lr_scale("sqrt", 64, 64), 1.0);
  EXPECT_DOUBLE_EQ(lr_scale("sqrt", 128, 32), 2.0);
  EXPECT_DOUBLE_EQ(lr_scale("linear", 16, 64), 0.25);
  EXPECT_DOUBLE_EQ(lr_scale("none", 16, 64), 1.0);
  EXPECT_THROW(lr_scale("cubic", 16, 64), ConfigError);
}

TEST(ControlFile, ParsesEveryKeyAndRefusesWhatIsNotARequest) {
  EXPECT_EQ(parse_control(R"({"batch_size": 32})", "c.json"), (ControlRequest{32, 0, 0}));
  EXPECT_EQ(parse_control(R"({"batch_size": 8, "chunk_size": 2, "after_step": 500})", "c.json"), (ControlRequest{8, 2, 500}));
  EXPECT_EQ(parse_control("{}", "c.json"), ControlRequest{});
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{\"batch_size\": 32", "not valid JSON"},
      {"[32]", "expected a JSON object"},
      {R"({"batchsize": 32})", "unknown key 'batchsize'"},
      {R"({"batch_size": "32"})", "key 'batch_size' must be an integer >= 1"},
      {R"({"batch_size": 0})", "key 'batch_size' must be an integer >= 1"},
      {R"({"chunk_size": 2.5})", "key 'chunk_size' must be an integer >= 1"},
      {R"({"after_step": -1})", "key 'after_step' must be an integer >= 0"},
  };
  for (const auto& [text, want] : bad) {
    try {
      parse_control(text, "run/control.json");
      ADD_FAILURE() << text << " was accepted";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("run/control.json: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

TEST(ControlFile, WatchReadsANewOrReplacedFileOnce) {
  testing::ScratchDir dir;
  ControlWatch watch((dir / "control.json").string());
  EXPECT_FALSE(watch.poll()) << "no file, no request";
  write_file_atomic(dir / "control.json", R"({"batch_size": 32})");
  EXPECT_EQ(watch.poll(), (ControlRequest{32, 0, 0}));
  EXPECT_FALSE(watch.poll()) << "unchanged";
  write_file_atomic(dir / "control.json", R"({"batch_size": 16})");  // replaced, same size
  EXPECT_EQ(watch.poll(), (ControlRequest{16, 0, 0}));
  write_file_atomic(dir / "control.json", R"({"batch_size": "x"})");
  EXPECT_THROW(watch.poll(), DataError);
  EXPECT_FALSE(watch.poll()) << "a malformed file is reported once";
  write_file_atomic(dir / "control.json", R"({"chunk_size": 4})");
  EXPECT_EQ(watch.poll(), (ControlRequest{0, 4, 0}));
}

}  // namespace
}  // namespace ragmig::train
