// Pairs from raw text (text/pretrain_pairs.h): crops are spans of their document within the length bounds,
// ICT queries are sentences mostly taken out of their positive, everything is fixed by the seed; and the real
// `ragmig train` pre-trains with data.pretrain on a raw-text file.
#include <gtest/gtest.h>

#include <set>

#include "core/atomic_file.h"
#include "core/error.h"
#include "support/process.h"
#include "support/test_support.h"
#include "text/pretrain_pairs.h"

namespace ragmig::text {
namespace {

std::vector<std::string> documents() {
  std::vector<std::string> docs;
  for (int d = 0; d < 200; ++d) {
    std::string doc;
    const int sentences = 1 + d % 6;
    for (int s = 0; s < sentences; ++s) {
      doc += "Sentence " + std::to_string(s) + " of document " + std::to_string(d) + " says w" + std::to_string(d * 7 + s);
      doc += s % 3 == 2 ? "? " : ". ";
    }
    docs.push_back(doc);
  }
  docs.push_back("too short");  // fewer than 4 words, one sentence: no pair of either kind
  return docs;
}

bool contains_words_in_order(const std::string& doc, const std::string& span) {
  return (" " + doc + " ").find(" " + span + " ") != std::string::npos;
}

TEST(PretrainPairs, CropsAreSpansOfTheirDocumentWithinTheLengthBounds) {
  const auto docs = documents();
  const auto pairs = pretrain_examples(docs, PretrainTask::kCrop, 3);
  EXPECT_EQ(pairs.size(), 200u);
  std::set<int64_t> keys;
  int differ = 0;
  for (const auto& p : pairs) {
    const std::string& doc = docs[static_cast<size_t>(p.positive_key)];
    keys.insert(p.positive_key);
    size_t words = 1;
    for (char c : doc) words += c == ' ';
    for (const std::string* span : {&p.query, &p.positive}) {
      EXPECT_TRUE(contains_words_in_order(doc, *span)) << *span << " | " << doc;
      size_t n = 1;
      for (char c : *span) n += c == ' ';
      EXPECT_GE(n, std::max<size_t>(1, words / 10)) << *span;
      EXPECT_LE(n, words / 2 + 1) << *span;
    }
    differ += p.query != p.positive;
    EXPECT_TRUE(p.negatives.empty());
  }
  EXPECT_EQ(keys.size(), pairs.size()) << "one pair per document, keyed by it";
  EXPECT_GT(differ, 150) << "query and positive are drawn independently";
}

TEST(PretrainPairs, IctQueriesAreSentencesMostlyTakenOutOfTheirPositive) {
  const auto docs = documents();
  const auto pairs = pretrain_examples(docs, PretrainTask::kIct, 3);
  EXPECT_LT(pairs.size(), 200u) << "one-sentence documents give no ICT pair";
  int kept = 0;
  for (const auto& p : pairs) {
    const auto sentences = split_sentences(docs[static_cast<size_t>(p.positive_key)]);
    ASSERT_GE(sentences.size(), 2u);
    EXPECT_NE(std::find(sentences.begin(), sentences.end(), p.query), sentences.end()) << p.query;
    kept += p.positive.find(p.query) != std::string::npos;
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, static_cast<int>(pairs.size()) / 4) << "the sentence stays in the positive about 1 time in 10";
}

TEST(PretrainPairs, TheSeedDecidesEveryDraw) {
  const auto docs = documents();
  for (const auto task : {PretrainTask::kCrop, PretrainTask::kIct}) {
    const auto a = pretrain_examples(docs, task, 11), b = pretrain_examples(docs, task, 11);
    const auto c = pretrain_examples(docs, task, 12);
    ASSERT_EQ(a.size(), b.size());
    int same_as_c = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].query, b[i].query);
      EXPECT_EQ(a[i].positive, b[i].positive);
      same_as_c += a[i].query == c[i].query && a[i].positive == c[i].positive;
    }
    EXPECT_LT(same_as_c, static_cast<int>(a.size()) / 2);
    // A document's pair depends on the seed, its text and its position only, not on the other documents.
    auto changed = docs;
    changed[0] = "Another first document. With two sentences and more words.";
    const auto t = pretrain_examples(changed, task, 11);
    EXPECT_EQ(t.back().query, a.back().query);
    EXPECT_EQ(t.back().positive, a.back().positive);
  }
}

TEST(PretrainPairs, SentencesTasksAndRawFiles) {
  EXPECT_EQ(split_sentences("One. Two? Three! 3.5 stays. Last"),
            (std::vector<std::string>{"One.", "Two?", "Three!", "3.5 stays.", "Last"}));
  EXPECT_THROW(parse_pretrain_task("mlm"), ConfigError);
  testing::ScratchDir dir;
  write_file_atomic(dir / "docs.txt", "first document here\n\n  \nsecond document\n");
  EXPECT_EQ(read_raw_documents((dir / "docs.txt").string()).size(), 2u);
  write_file_atomic(dir / "docs.jsonl", "{\"title\": \"T\", \"text\": \"body\"}\n{\"text\": \"x\"}\n");
  EXPECT_EQ(read_raw_documents((dir / "docs.jsonl").string()), (std::vector<std::string>{"T body", "x"}));
  write_file_atomic(dir / "bad.jsonl", "{\"text\": \"x\"}\n{\"title\": \"no text\"}\n");
  try {
    read_raw_documents((dir / "bad.jsonl").string());
    FAIL() << "a row without text was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:2"), std::string::npos) << e.what();
  }
}

TEST(PretrainCli, RagmigTrainPreTrainsOnRawTextAndRefusesAmbiguousSources) {
  testing::ScratchDir dir;
  std::string corpus;
  for (const auto& d : documents()) corpus += d + "\n";
  write_file_atomic(dir / "raw.txt", corpus);
  const std::string config = R"([data]
pretrain = "ict"
corpus = ")" + (dir / "raw.txt").string() + R"("
max_query_tokens = 24
max_passage_tokens = 64

[model]
vocab_size = 300
hidden_size = 32
layers = 1
heads = 2
intermediate_size = 64
max_position = 64

[train]
max_steps = 3
batch_size = 8
threads = 1
precision = "fp32"

[eval]
split = ""
)";
  write_file_atomic(dir / "pretrain.toml", config);
  const auto run = [&](const std::string& run_dir, std::vector<std::string> extra) {
    std::vector<std::string> argv = {RAGMIG_BINARY, "train", (dir / "pretrain.toml").string(), "--run-dir",
                                     (dir / run_dir).string(), "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing::run_process(argv);
  };
  const auto ok = run("run", {});
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "run/model/config.json"));
  auto bad = run("run2", {"--set", "data.pretrain=\"mlm\""});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("data.pretrain"), std::string::npos) << bad.output;
  bad = run("run3", {"--set", "data.pairs=\"x.jsonl\""});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("data.pairs"), std::string::npos) << bad.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "run2"));
  EXPECT_FALSE(std::filesystem::exists(dir / "run3"));
}

}  // namespace
}  // namespace ragmig::text
