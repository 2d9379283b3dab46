// Batch assembly (train/training_data.h): hard negatives drawn from a mined pool larger than asked for, real
// tokens counted on the host; step losses read back in one copy (train/step_losses.h).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "support/test_support.h"
#include "text/beir.h"
#include "text/wordpiece.h"
#include "train/step_losses.h"
#include "train/training_data.h"

namespace ragmig::train {
namespace {

// One passage per token id: passage row r is the single token 100 + r, so a batch's rows name its passages.
TokenizedData pooled_data(int64_t examples, int64_t pool) {
  TokenizedData d;
  for (int64_t e = 0; e < examples; ++e) {
    d.queries.push_back({static_cast<int32_t>(e + 1)});
    d.positive.push_back(static_cast<int64_t>(d.passages.size()));
    d.more_positives.emplace_back();
    d.batch_key.push_back(e);
    d.passages.push_back({static_cast<int32_t>(100 + d.passages.size())});
    std::vector<int64_t> negs;
    for (int64_t k = 0; k < pool; ++k) {
      negs.push_back(static_cast<int64_t>(d.passages.size()));
      d.passages.push_back({static_cast<int32_t>(100 + d.passages.size())});
    }
    d.negatives.push_back(negs);
  }
  return d;
}

std::vector<int32_t> negatives_of(const PairBatch& b, int64_t batch_rows, int64_t example, int64_t h) {
  std::vector<int32_t> out;
  const auto ids = b.p_ids.index({torch::indexing::Slice(), 0});  // one real token per passage (no [CLS] here)
  for (int64_t j = 0; j < h; ++j) out.push_back(ids[batch_rows + example * h + j].item<int32_t>());
  return out;
}

TEST(AssembleBatch, AMinedPoolLargerThanAskedIsDrawnFromAnewEachStepAndTheSameOnResume) {
  const TokenizedData d = pooled_data(2, 6);
  const std::vector<int64_t> rows = {0, 1};
  std::set<std::vector<int32_t>> draws;
  for (int64_t step = 1; step <= 20; ++step) {
    const PairBatch b = assemble_batch(d, rows, 2, 0, 7, step, torch::kCPU, 0);
    for (int64_t e = 0; e < 2; ++e) {
      const auto negs = negatives_of(b, 2, e, 2);
      EXPECT_NE(negs[0], negs[1]) << "drawn without replacement";
      for (const int32_t id : negs) {
        const int64_t row = id - 100;
        EXPECT_NE(std::find(d.negatives[e].begin(), d.negatives[e].end(), row), d.negatives[e].end())
            << "passage " << row << " is not in example " << e << "'s pool";
      }
      if (e == 0) draws.insert(negs);
    }
    // The same seed and step give the same batch (what a resumed run relies on).
    EXPECT_TRUE(torch::equal(b.p_ids, assemble_batch(d, rows, 2, 0, 7, step, torch::kCPU, 0).p_ids));
  }
  EXPECT_GT(draws.size(), 5u) << "different steps draw different negatives from the pool of 6";
}

// A mined negative that is another example's positive is never drawn while that example is in the batch (it
// would be scored as a negative of its own query); in another batch it is drawn as usual. A replica filters by the
// whole global batch, so it draws what one process would.
TEST(AssembleBatch, NoHardNegativeIsAPositiveOfTheBatch) {
  TokenizedData d = pooled_data(3, 2);  // passages: e0 0 (negs 1, 2), e1 3 (4, 5), e2 6 (7, 8)
  d.negatives[0] = {3, 1};              // e1's positive, and its own
  const std::vector<int64_t> both = {0, 1}, apart = {0, 2};
  for (int64_t step = 1; step <= 10; ++step) {
    EXPECT_EQ(negatives_of(assemble_batch(d, both, 1, 0, 7, step, torch::kCPU, 0), 2, 0, 1),
              (std::vector<int32_t>{101}));
    EXPECT_EQ(negatives_of(assemble_batch(d, both, 2, 0, 7, step, torch::kCPU, 0), 2, 0, 2)[0], 101)
        << "its own pool first; the missing one drawn at random";
  }
  std::set<int32_t> drawn;
  for (int64_t step = 1; step <= 10; ++step)
    drawn.insert(negatives_of(assemble_batch(d, apart, 1, 0, 7, step, torch::kCPU, 0), 2, 0, 1)[0]);
  EXPECT_EQ(drawn, (std::set<int32_t>{101, 103})) << "without e1 in the batch, its positive is a fair negative";
  // Example 0 as a replica's shard of the global batch {0, 1}: the same draws.
  const std::vector<int64_t> shard = {0};
  for (int64_t step = 1; step <= 10; ++step)
    EXPECT_EQ(negatives_of(assemble_batch(d, shard, 1, 0, 7, step, torch::kCPU, 0, both), 1, 0, 1),
              negatives_of(assemble_batch(d, both, 1, 0, 7, step, torch::kCPU, 0), 2, 0, 1));
}

TEST(AssembleBatch, APoolOfExactlyTheAskedSizeIsTakenInOrder) {
  const TokenizedData d = pooled_data(1, 3);
  const std::vector<int64_t> rows = {0};
  const PairBatch b = assemble_batch(d, rows, 3, 0, 7, 5, torch::kCPU, 0);
  EXPECT_EQ(negatives_of(b, 1, 0, 3), (std::vector<int32_t>{101, 102, 103}));
}

TEST(AssembleBatch, CountsTheRealTokensOnTheHostAsTheMasksHoldThem) {
  // Queries and passages of different lengths, so that both masks have padding.
  TokenizedData d = pooled_data(3, 2);
  d.queries[1] = {5, 6, 7, 8};
  d.passages[0] = {100, 9, 9};
  d.passages[4] = {104, 9, 9, 9, 9, 9};
  const std::vector<int64_t> rows = {0, 1, 2};
  const PairBatch b = assemble_batch(d, rows, 2, 0, 7, 3, torch::kCPU, 0);
  EXPECT_GT(b.q_mask.numel(), b.q_mask.sum().item<int64_t>()) << "the queries are padded";
  EXPECT_EQ(b.real_tokens, b.q_mask.sum().item<int64_t>() + b.p_mask.sum().item<int64_t>());
}

// Training straight from a BEIR folder leaves out qrels rows whose query or document is blank, and says how many.
TEST(LoadExamples, ABeirFolderSBlankQueriesAndDocumentsAreLeftOutAndCounted) {
  testing::ScratchDir dir;
  std::filesystem::create_directories(dir / "qrels");
  write_file_atomic(dir / "corpus.jsonl", R"({"_id": "d1", "title": "Lava", "text": "erupts from volcanoes"}
{"_id": "d2", "title": " ", "text": ""}
)");
  write_file_atomic(dir / "queries.jsonl", R"({"_id": "q1", "text": "where does lava erupt"}
{"_id": "q2", "text": ""}
)");
  write_file_atomic(dir / "qrels/train.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td1\t1\nq1\td2\t1\n");
  const text::BeirFolder beir = text::read_beir(dir.path().string());
  DataConfig cfg;
  cfg.beir = dir.path().string();
  cfg.split = "train";
  const TrainingExamples loaded = load_examples(cfg, &beir, 1);
  ASSERT_EQ(loaded.examples.size(), 1u);
  EXPECT_EQ(loaded.examples[0].query, "where does lava erupt");
  EXPECT_EQ(loaded.blank_skipped, 2);

  write_file_atomic(dir / "qrels/train.tsv", "query-id\tcorpus-id\tscore\nq2\td1\t1\nq1\td2\t1\n");
  try {
    load_examples(cfg, &beir, 1);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("qrels/train.tsv: no training examples (2 rows with a blank query or "
                                         "document left out)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Tokenize, PromptsGoFirstAndCountTowardTheTokenLimits) {
  // ids: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, query 4, : 5, passage 6, hello 7, world 8
  const text::WordPieceTokenizer tok({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "query", ":", "passage", "hello", "world"});
  const std::vector<text::TrainingExample> examples = {{"q1", "hello", "world", {"hello world"}, 0, {}}};
  DataConfig cfg;
  cfg.max_query_tokens = 8;
  cfg.max_passage_tokens = 8;
  using Ids = std::vector<int32_t>;
  const TokenizedData plain = tokenize(examples, tok, cfg);
  EXPECT_EQ(plain.queries[0], (Ids{2, 7, 3}));
  EXPECT_EQ(plain.passages, (std::vector<Ids>{{2, 8, 3}, {2, 7, 8, 3}}));

  const TokenizedData prompted = tokenize(examples, tok, cfg, {"query: ", "passage: "});
  EXPECT_EQ(prompted.queries[0], (Ids{2, 4, 5, 7, 3}));
  EXPECT_EQ(prompted.passages, (std::vector<Ids>{{2, 6, 5, 8, 3}, {2, 6, 5, 7, 8, 3}}))
      << "positives and negatives alike";

  cfg.max_query_tokens = 4;
  EXPECT_EQ(tokenize(examples, tok, cfg, {"query: ", ""}).queries[0], (Ids{2, 4, 5, 3}))
      << "the prompt fills the limit first";
  EXPECT_EQ(tokenize(examples, tok, cfg, {"query: ", ""}).passages[0], (Ids{2, 8, 3})) << "no passage prompt";
}

// One passage row per text: a hard negative that is another example's positive is that example's row (what the
// batch samplers' clash rule compares), and the batch keys join the claim judged twice.
TEST(Tokenize, ANegativeThatIsAnotherExamplesPositiveIsItsRow) {
  const text::WordPieceTokenizer tok({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "x", "y"});
  const std::vector<text::TrainingExample> examples = {{"", "x", "a", {"b"}, 0, {}},
                                                       {"", "y", "b", {"c", "a"}, 1, {}},
                                                       {"", "x", "c", {}, 2, {}}};
  const TokenizedData d = tokenize(examples, tok, DataConfig{});
  EXPECT_EQ(d.passages.size(), 3u);
  EXPECT_EQ(d.positive, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(d.negatives, (std::vector<std::vector<int64_t>>{{1}, {2, 0}, {}}));
  EXPECT_EQ(d.batch_key, (std::vector<int64_t>{0, 1, 0}));  // query "x" twice
}

// FlagEmbedding's "pos" arrays: every positive of an example is a row, one is trained on at each step, each about
// as often, by seed, step and place in the global batch (a replica draws what one process would, a resumed run
// what it drew before), and none of them, drawn or not, is ever a hard negative of its batch.
TEST(AssembleBatch, AnExampleWithSeveralPositivesTrainsOnOneDrawnEachStep) {
  // ids: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, a 4, b 5, c 6, d 7, e 8, f 9, x 10, y 11
  const text::WordPieceTokenizer tok({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d", "e", "f", "x", "y"});
  const std::vector<text::TrainingExample> examples = {{"", "x", "a", {"d"}, 0, {"b", "c"}},
                                                       {"", "y", "e", {"b", "f"}, 1, {}}};
  const TokenizedData d = tokenize(examples, tok, DataConfig{});
  ASSERT_EQ(d.more_positives[0].size(), 2u);
  EXPECT_TRUE(d.more_positives[1].empty());
  const std::vector<int64_t> both = {0, 1}, first = {0};
  std::map<int32_t, int> trained;  // example 0's positive, by its word
  for (int64_t step = 1; step <= 300; ++step) {
    const PairBatch b = assemble_batch(d, both, 1, 0, 7, step, torch::kCPU, 0);
    const auto word = b.p_ids.index({torch::indexing::Slice(), 1});  // [CLS] word [SEP]
    ++trained[word[0].item<int32_t>()];
    EXPECT_EQ(word[1].item<int32_t>(), 8) << "example 1 has one positive, e";
    EXPECT_EQ(word[2].item<int32_t>(), 7) << "example 0's negative, d";
    EXPECT_EQ(word[3].item<int32_t>(), 9) << "example 1's pool is b and f: b, a positive of example 0, is never drawn";
    EXPECT_TRUE(torch::equal(b.p_ids, assemble_batch(d, both, 1, 0, 7, step, torch::kCPU, 0).p_ids)) << "by step";
    // Example 0 as a replica's shard of the global batch {0, 1}: the same positive.
    EXPECT_EQ(assemble_batch(d, first, 1, 0, 7, step, torch::kCPU, 0, both).p_ids[0][1].item<int32_t>(),
              word[0].item<int32_t>());
  }
  ASSERT_EQ(trained.size(), 3u) << "a, b and c";
  for (const auto& [token, times] : trained) EXPECT_GT(times, 70) << token << ": about 100 of 300 each";
}

TEST(StepLosses, ReadsEachLossOnceInStepOrder) {
  StepLosses losses;
  EXPECT_TRUE(losses.read().empty());
  losses.add(4, torch::tensor(0.5, torch::kDouble));
  losses.add(5, torch::tensor(std::nan(""), torch::kDouble));  // read as it is: the trainer decides
  losses.add(6, torch::tensor(0.25f));                          // any dtype comes back as double
  const auto read = losses.read();
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0], (std::pair<int64_t, double>{4, 0.5}));
  EXPECT_EQ(read[1].first, 5);
  EXPECT_TRUE(std::isnan(read[1].second));
  EXPECT_EQ(read[2], (std::pair<int64_t, double>{6, 0.25}));
  EXPECT_TRUE(losses.read().empty());  // each once
}

// Length grouping sorts an example by its query and its longest positive: with a "pos" array any of them may be the
// one drawn, and the batch is padded to it.
TEST(GroupingLengths, AnExampleCountsItsLongestPositive) {
  TokenizedData d = pooled_data(3, 0);
  d.queries[0] = {1, 2, 3};
  d.passages.push_back(std::vector<int32_t>(40, 7));  // row 3: a long second positive of example 1
  d.passages.push_back(std::vector<int32_t>(5, 7));   // row 4: a short one of example 2
  d.more_positives[1] = {3};
  d.more_positives[2] = {4};
  EXPECT_EQ(grouping_lengths(d), (std::vector<int64_t>{3 + 1, 1 + 40, 1 + 5}));
}

}  // namespace
}  // namespace ragmig::train
