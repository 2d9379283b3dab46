// unique_positive_batches: a hand-computed case of the deferral rule, the invariants (no repeated key, no
// repeated example, few dropped) on synthetic keys and on SQuAD's qrels, determinism and pinned values.
#include "text/batch_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "core/splitmix.h"
#include "support/test_support.h"
#include "text/batch_keys.h"
#include "text/beir.h"
#include "text/pairs.h"

namespace ragmig::text {
namespace {

using Batches = std::vector<std::vector<int64_t>>;

TEST(BatchSampler, HandComputedDeferral) {
  // keys by example: 0 0 1 2 1 3; batch 2; order 0..5.
  // batch 0: ex0 (k0), ex1 (k0) deferred, ex2 (k1)  -> {0, 2}
  // batch 1: deferred ex1 first, then ex3 (k2)      -> {1, 3}
  // batch 2: ex4 (k1), ex5 (k3)                     -> {4, 5}
  const std::vector<int64_t> keys = {0, 0, 1, 2, 1, 3};
  const std::vector<int64_t> order = {0, 1, 2, 3, 4, 5};
  EXPECT_EQ(batches_from_order(order, keys, 2), (Batches{{0, 2}, {1, 3}, {4, 5}}));
  // keys 7 7 7 9: {0, 3}; then ex1 alone cannot fill a batch -> ex1, ex2 dropped.
  EXPECT_EQ(batches_from_order(std::vector<int64_t>{0, 1, 2, 3}, std::vector<int64_t>{7, 7, 7, 9}, 2),
            (Batches{{0, 3}}));
  // Waiting keys are served round robin: keys 0 0 0 1 1 1 2 2 2 in order, batch 3.
  // b0: ex0 k0, ex1 k0 defer, ex2 k0 defer, ex3 k1, ex4 k1 defer, ex5 k1 defer, ex6 k2 -> {0, 3, 6}
  // b1: waiting k0 -> ex1, k1 -> ex4; then ex7 k2                          -> {1, 4, 7}
  // b2: waiting k0 -> ex2, k1 -> ex5; then ex8 k2                          -> {2, 5, 8}
  EXPECT_EQ(batches_from_order(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8},
                               std::vector<int64_t>{0, 0, 0, 1, 1, 1, 2, 2, 2}, 3),
            (Batches{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}));
}

void check_invariants(const std::vector<int64_t>& keys, const Batches& batches, int64_t batch_size) {
  std::vector<int> seen(keys.size(), 0);
  for (const auto& b : batches) {
    ASSERT_EQ(static_cast<int64_t>(b.size()), batch_size);
    std::set<int64_t> in_batch;
    for (int64_t ex : b) {
      ASSERT_TRUE(in_batch.insert(keys[static_cast<size_t>(ex)]).second) << "repeated key in a batch";
      ASSERT_EQ(seen[static_cast<size_t>(ex)]++, 0) << "example " << ex << " twice in an epoch";
    }
  }
}

std::vector<int64_t> skewed_keys(size_t n) {
  // About 4.6 examples per key, with a heavy tail (some keys have dozens), ids scattered.
  std::vector<int64_t> keys;
  uint64_t x = 7;
  int64_t key = 1000;
  while (keys.size() < n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t reps = (x >> 60) == 0 ? 40 : 1 + static_cast<int64_t>((x >> 33) % 7);
    for (int64_t r = 0; r < reps && keys.size() < n; ++r) keys.push_back(key * 31);
    ++key;
  }
  return keys;
}

TEST(BatchSampler, SyntheticInvariants) {
  const auto keys = skewed_keys(20000);
  for (int64_t b : {1, 8, 64, 256}) {
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      const Batches batches = unique_positive_batches(keys, b, 17, epoch);
      check_invariants(keys, batches, b);
      const int64_t dropped = static_cast<int64_t>(keys.size()) - static_cast<int64_t>(batches.size()) * b;
      EXPECT_LT(dropped, 3 * b + 40) << "batch " << b;  // +40: the heaviest key's tail can wait at the end
    }
  }
}

TEST(BatchSampler, DeterministicPerSeedAndEpoch) {
  const auto keys = skewed_keys(3000);
  const Batches a = unique_positive_batches(keys, 32, 5, 2);
  EXPECT_EQ(a, unique_positive_batches(keys, 32, 5, 2));
  EXPECT_NE(a, unique_positive_batches(keys, 32, 5, 3));
  EXPECT_NE(a, unique_positive_batches(keys, 32, 6, 2));
}

TEST(BatchSampler, PermutationIsPinned) {
  // Pinned so that a platform or library change that alters the order is caught (mt19937_64 is fully
  // specified by the standard; the shuffle and bounded draw are ours).
  const std::vector<int64_t> p = epoch_permutation(10, 42, 0);
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(sorted[static_cast<size_t>(i)], i);
  EXPECT_EQ(p, (std::vector<int64_t>{9, 6, 2, 0, 1, 4, 3, 8, 5, 7}));
  EXPECT_TRUE(epoch_permutation(0, 1, 1).empty());
  EXPECT_EQ(epoch_permutation(1, 1, 1), (std::vector<int64_t>{0}));
}

TEST(BatchSampler, Errors) {
  const std::vector<int64_t> keys = {1, 1, 2};
  EXPECT_THROW(unique_positive_batches(keys, 3, 0, 0), DataError);
  EXPECT_THROW(unique_positive_batches(keys, 0, 0, 0), ConfigError);
  EXPECT_EQ(unique_positive_batches(keys, 2, 0, 0).size(), 1u);
}

// Tokens a batch costs when padded to its longest example.
int64_t padded_tokens(const Batches& batches, const std::vector<int64_t>& lengths) {
  int64_t total = 0;
  for (const auto& b : batches) {
    int64_t longest = 0;
    for (int64_t ex : b) longest = std::max(longest, lengths[static_cast<size_t>(ex)]);
    total += longest * static_cast<int64_t>(b.size());
  }
  return total;
}

TEST(LengthGroupedBatches, KeepTheRulesAndPadLess) {
  const auto keys = skewed_keys(20000);
  std::vector<int64_t> lengths(keys.size());
  for (size_t i = 0; i < keys.size(); ++i)  // one length per positive passage, 20..275 tokens
    lengths[i] = 20 + static_cast<int64_t>(splitmix64(static_cast<uint64_t>(keys[i])) % 256);
  for (int64_t b : {8, 64}) {
    const Batches plain = unique_positive_batches(keys, b, 17, 1);
    const Batches grouped = length_grouped_batches(keys, lengths, b, 50, 17, 1);
    check_invariants(keys, grouped, b);
    const int64_t dropped = static_cast<int64_t>(keys.size()) - static_cast<int64_t>(grouped.size()) * b;
    EXPECT_LT(dropped, 3 * b + 40) << "batch " << b;
    const double ratio = static_cast<double>(padded_tokens(grouped, lengths)) / static_cast<double>(padded_tokens(plain, lengths));
    EXPECT_LT(ratio, 0.7) << "batch " << b;  // uniform lengths: padding to the batch's longest is ~0.98 of 275
    std::printf("batch %lld: padded tokens %.3f of unsorted\n", static_cast<long long>(b), ratio);
    // The long batches are spread over the epoch, not all first.
    int64_t long_first_half = 0, long_total = 0;
    for (size_t i = 0; i < grouped.size(); ++i) {
      const bool is_long = lengths[static_cast<size_t>(grouped[i][0])] > 150;
      long_total += is_long;
      long_first_half += is_long && i < grouped.size() / 2;
    }
    EXPECT_GT(long_first_half, long_total / 4);
    EXPECT_LT(long_first_half, long_total * 3 / 4);
  }
}

TEST(LengthGroupedBatches, DeterministicAndPlainWithoutGroups) {
  const auto keys = skewed_keys(3000);
  std::vector<int64_t> lengths(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) lengths[i] = static_cast<int64_t>(i % 97);
  const Batches a = length_grouped_batches(keys, lengths, 32, 20, 5, 2);
  EXPECT_EQ(a, length_grouped_batches(keys, lengths, 32, 20, 5, 2));
  EXPECT_NE(a, length_grouped_batches(keys, lengths, 32, 20, 5, 3));
  EXPECT_NE(a, length_grouped_batches(keys, lengths, 32, 20, 6, 2));
  EXPECT_EQ(length_grouped_batches(keys, lengths, 32, 0, 5, 2), unique_positive_batches(keys, 32, 5, 2));
  EXPECT_EQ(length_grouped_batches(keys, lengths, 32, 1, 5, 2), unique_positive_batches(keys, 32, 5, 2));
}

TEST(LengthGroupedBatches, Errors) {
  const std::vector<int64_t> keys = {1, 1, 2};
  EXPECT_THROW(length_grouped_batches(keys, std::vector<int64_t>{1, 2}, 2, 4, 0, 0), DataError);
  EXPECT_THROW(length_grouped_batches(keys, std::vector<int64_t>{1, 2, 3}, 0, 4, 0, 0), ConfigError);
  EXPECT_THROW(length_grouped_batches(keys, std::vector<int64_t>{1, 2, 3}, 3, 4, 0, 0), DataError);
}

TEST(BatchSampler, SquadTrainQrels) {
  RAGMIG_REQUIRE_DATA("beir/squad-train/qrels/train.tsv");
  const Qrels qrels = read_qrels((ragmig::testing::data_dir() / "beir/squad-train/qrels/train.tsv").string());
  std::unordered_map<std::string, int64_t> key_of;
  std::vector<int64_t> keys;
  for (const auto& e : qrels.entries)
    if (e.score > 0) keys.push_back(key_of.emplace(e.doc_id, static_cast<int64_t>(key_of.size())).first->second);
  ASSERT_EQ(keys.size(), 78449u);
  for (int64_t b : {64, 512}) {
    const Batches batches = unique_positive_batches(keys, b, 1234, 0);
    check_invariants(keys, batches, b);
    const int64_t dropped = static_cast<int64_t>(keys.size()) - static_cast<int64_t>(batches.size()) * b;
    EXPECT_LT(dropped, 3 * b) << "batch " << b;
  }
}

// The keys the trainer batches by (text/batch_keys.h): a query with two positives, and every example joined to
// it through either positive, is one group.
TEST(BatchKeys, ExamplesJoinedByAPositiveOrAQueryTextShareAKey) {
  const auto ex = [](std::string query, int64_t positive) {
    TrainingExample e;
    e.query = std::move(query);
    e.positive = "abstract " + std::to_string(positive);
    e.positive_key = positive;
    return e;
  };
  // claim a -> docs 1, 2; claim b -> doc 2; claim c -> doc 3; claim d -> doc 4, and a row of c again (doc 5).
  const std::vector<TrainingExample> examples = {ex("a", 1), ex("c", 3), ex("a", 2), ex("b", 2),
                                                 ex("d", 4), ex("c", 5)};
  EXPECT_EQ(batch_keys(examples), (std::vector<int64_t>{0, 1, 0, 0, 2, 1}));
  EXPECT_TRUE(batch_keys({}).empty());
  // A "pos" array's other passage joins by its text: claim d also judges c's first abstract.
  std::vector<TrainingExample> more = examples;
  more[4].more_positives = {"abstract 3"};
  EXPECT_EQ(batch_keys(more), (std::vector<int64_t>{0, 1, 0, 0, 1, 1}));
}

// On SciFact's training qrels (claims judged against several abstracts): no batch holds a claim twice or an
// abstract twice, so no claim meets its other abstract as an in-batch negative.
TEST(BatchKeys, NoSciFactBatchHoldsAClaimOrAnAbstractTwice) {
  RAGMIG_REQUIRE_DATA("beir/scifact/qrels/train.tsv");
  const std::string dir = (ragmig::testing::data_dir() / "beir/scifact").string();
  const auto examples = examples_from_beir(read_beir(dir), read_qrels(qrels_path(dir, "train")));
  const auto keys = batch_keys(examples);
  const std::set<int64_t> groups(keys.begin(), keys.end());
  std::set<std::string> claims;
  for (const auto& e : examples) claims.insert(e.query);
  EXPECT_LT(claims.size(), examples.size()) << "SciFact has claims with several judged abstracts";
  EXPECT_LE(groups.size(), claims.size());
  int64_t batches = 0;
  for (int64_t epoch = 0; epoch < 3; ++epoch)
    for (const auto& batch : unique_positive_batches(keys, 32, 42, epoch)) {
      std::set<std::string> queries;
      std::set<int64_t> positives;
      for (int64_t i : batch) {
        EXPECT_TRUE(queries.insert(examples[static_cast<size_t>(i)].query).second) << "a claim twice";
        EXPECT_TRUE(positives.insert(examples[static_cast<size_t>(i)].positive_key).second) << "an abstract twice";
      }
      ++batches;
    }
  EXPECT_GE(batches, 3 * (static_cast<int64_t>(examples.size()) / 32 - 2));
}

}  // namespace
}  // namespace ragmig::text
