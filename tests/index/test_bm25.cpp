// BM25 against scores computed by hand from Lucene's formula on a four-document index, the same through a
// save/load round trip, multi-field statistics, Lucene's lossy lengths, and search() against the
// term-by-term reference score() on a larger index.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <random>

#include "core/atomic_file.h"
#include "core/error.h"
#include "index/bm25_index.h"
#include "support/test_support.h"

namespace ragmig::index {
namespace {

// Analysed (porter): d0 [cat chase mice], d1 [cat sat mat], d2 [dog chase cat cat chase dog], d3 [bird sing].
// N = 4, total length 14, avgdl = 3.5; k1 = 0.9, b = 0.4.
const std::vector<std::vector<std::string>> kToy = {
    {"d0", "Cats", "cats chase mice"},
    {"d1", "", "the cat sat on the mat"},
    {"d2", "Dogs", "dogs chase cats and cats chase dogs"},
    {"d3", "Birds", "a bird sings"},
};

std::vector<DocumentView> views(const std::vector<std::vector<std::string>>& docs) {
  std::vector<DocumentView> out;
  for (const auto& d : docs) out.push_back(DocumentView{d[0], d[1], d[2]});
  return out;
}

// Text only (no titles), so the flat field is exactly the texts above.
std::vector<std::vector<std::string>> toy_without_titles() {
  auto docs = kToy;
  for (auto& d : docs) d[1].clear();
  return docs;
}

TEST(Bm25, ScoresMatchLucenesFormulaByHand) {
  const auto docs = toy_without_titles();
  const Bm25Index index = Bm25Index::build(views(docs), Bm25Spec{}, 2);
  EXPECT_DOUBLE_EQ(index.avg_length(0), 3.5);
  EXPECT_EQ(index.doc_count(0), 4);
  EXPECT_EQ(index.doc_freq("cat", 0), 3);
  // "cat": idf = ln(1 + (4 - 3 + 0.5) / (3 + 0.5)) = 0.356675
  //   d0, d1: tf 1, dl 3: 0.356675 * 1 / (1 + 0.9 * (0.6 + 0.4 * 3 / 3.5)) = 0.192946 (a tie: row order)
  //   d2:     tf 2, dl 6: 0.356675 * 2 / (2 + 0.9 * (0.6 + 0.4 * 6 / 3.5)) = 0.225948
  auto hits = index.search("cat", 10);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].doc, 2);
  EXPECT_NEAR(hits[0].score, 0.2259479, 1e-6);
  EXPECT_EQ(hits[1].doc, 0);
  EXPECT_NEAR(hits[1].score, 0.1929463, 1e-6);
  EXPECT_EQ(hits[2].doc, 1);
  EXPECT_NEAR(hits[2].score, 0.1929463, 1e-6);
  // "Chasing dogs" -> chase (df 2, idf ln 2), dog (df 1, idf ln(1 + 3.5 / 1.5)):
  //   d0: 0.693147 / 1.848571 = 0.374964;  d2: 0.693147 * 2 / 3.157143 + 1.203973 * 2 / 3.157143 = 1.201795
  hits = index.search("Chasing dogs", 10);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].doc, 2);
  EXPECT_NEAR(hits[0].score, 1.2017955, 1e-6);
  EXPECT_EQ(hits[1].doc, 0);
  EXPECT_NEAR(hits[1].score, 0.3749637, 1e-6);
  // A query term written twice counts twice (Anserini boosts a term by its query frequency).
  EXPECT_NEAR(index.search("cat cats", 1)[0].score, 2 * 0.2259479, 2e-6);
  // k cuts the list; a query sharing no term (or only stop words) finds nothing.
  EXPECT_EQ(index.search("cat", 1).size(), 1u);
  EXPECT_TRUE(index.search("zebra", 10).empty());
  EXPECT_TRUE(index.search("the and of", 10).empty());
  EXPECT_TRUE(index.search("", 10).empty());
}

TEST(Bm25, MultiFieldScoresEachFieldWithItsOwnStatistics) {
  Bm25Spec spec;
  spec.fields = Bm25Fields::kMulti;
  const Bm25Index index = Bm25Index::build(views(kToy), spec, 1);
  EXPECT_EQ(index.field_names(), (std::vector<std::string>{"title", "text"}));
  EXPECT_EQ(index.doc_count(0), 3) << "d1 has no title, so Lucene's docCount for title is 3";
  EXPECT_DOUBLE_EQ(index.avg_length(0), 1.0);
  // d0 "cat": title (N 3, df 1, dl 1, avgdl 1): ln(1 + 2.5 / 1.5) / (1 + 0.9) = 0.516226, plus text 0.192946.
  const auto hits = index.search("cat", 10);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].doc, 0);
  EXPECT_NEAR(hits[0].score, 0.7091722, 1e-6);
  EXPECT_EQ(hits[1].doc, 2);
  EXPECT_NEAR(hits[1].score, 0.2259479, 1e-6);
  EXPECT_NEAR(index.score("cat", 1), 0.1929463, 1e-6);
}

TEST(Bm25, FlatFieldJoinsTitleAndText) {
  const Bm25Index index = Bm25Index::build(views(kToy), Bm25Spec{}, 1);
  // d0 is now [cat cat chase mice]: length 4; d3 [bird bird sing].
  EXPECT_DOUBLE_EQ(index.avg_length(0), (4 + 3 + 7 + 3) / 4.0);
  EXPECT_EQ(index.doc_freq("bird", 0), 1);
}

TEST(Bm25, LuceneLengthsAreExactBelowFortyAndCoarseAbove) {
  const std::vector<std::pair<int32_t, int32_t>> table = {{0, 0},   {1, 1},   {23, 23}, {24, 24},   {39, 39},
                                                          {40, 40}, {41, 40}, {47, 46}, {100, 96}, {1000, 984}};
  for (auto [in, out] : table) EXPECT_EQ(lucene_encoded_length(in), out) << in;
}

TEST(Bm25, SaveLoadRoundTripsScoresAndStatistics) {
  testing::ScratchDir dir;
  for (Bm25Fields fields : {Bm25Fields::kFlat, Bm25Fields::kMulti}) {
    Bm25Spec spec;
    spec.fields = fields;
    spec.k1 = 1.2;
    spec.b = 0.75;
    const Bm25Index built = Bm25Index::build(views(kToy), spec, 2);
    const std::string path = (dir / "toy.bm25").string();
    built.save(path);
    const Bm25Index loaded = Bm25Index::load(path);
    EXPECT_EQ(loaded.spec(), spec);
    ASSERT_EQ(loaded.size(), built.size());
    for (int64_t row = 0; row < built.size(); ++row) EXPECT_EQ(loaded.doc_id(row), built.doc_id(row));
    EXPECT_EQ(loaded.vocabulary_size(), built.vocabulary_size());
    EXPECT_EQ(loaded.image(), built.image()) << "the file holds the built image byte for byte";
    for (const char* q : {"cat", "chasing dogs", "birds sing", "mat"}) EXPECT_EQ(loaded.search(q, 10), built.search(q, 10)) << q;
  }
}

TEST(Bm25, DamagedFilesAreRefusedWithTheirPath) {
  testing::ScratchDir dir;
  const std::string path = (dir / "toy.bm25").string();
  Bm25Index::build(views(kToy), Bm25Spec{}, 1).save(path);
  std::string bytes = read_file(path);

  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  write_file_atomic(path, flipped);
  try {
    Bm25Index::load(path);
    FAIL() << "a flipped byte was not noticed";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
  }
  write_file_atomic(path, bytes.substr(0, bytes.size() - 9));
  EXPECT_THROW(Bm25Index::load(path), DataError);
  write_file_atomic(path, "something else entirely");
  EXPECT_THROW(Bm25Index::load(path), DataError);
  std::string newer = bytes;
  newer[8] = 99;  // the version field follows the 8-byte magic
  write_file_atomic(path, newer);
  try {
    Bm25Index::load(path);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("version 99"), std::string::npos) << e.what();
  }
  std::string older = bytes;
  older[8] = 1;  // format 1 (int32 postings) is no longer read
  write_file_atomic(path, older);
  try {
    Bm25Index::load(path);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("format 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rebuilt"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Bm25Index::load((dir / "missing.bm25").string()), IoError);
}

// An image that passes the checksum yet is damaged (a writer's bug, a crafted file) is either refused by
// from_image's structural checks or searched without reading outside it: every hit a real row.
TEST(Bm25, DamagedImagesAreRefusedOrSearchedSafely) {
  const Bm25Index built = Bm25Index::build(views(kToy), Bm25Spec{}, 1);
  const std::string image(built.image());
  std::mt19937 rng(7);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    auto damaged = std::make_shared<std::string>(image);
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < flips; ++i) (*damaged)[rng() % damaged->size()] = static_cast<char>(rng());
    if (trial % 5 == 0) damaged->resize(rng() % damaged->size());
    try {
      const Bm25Index index = Bm25Index::from_image(*damaged, damaged, "damaged");
      for (const char* q : {"cat", "chasing dogs", "birds sing", "mat the"})
        for (const Hit& h : index.search(q, 10)) ASSERT_TRUE(h.doc >= 0 && h.doc < index.size());
    } catch (const DataError& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(refused, 1000) << "the structural checks refuse most damage";
}

// The postings are compact: on a few thousand real-sized documents (several builder blocks) the image holds
// about a byte and a half per posting, where int32 row + int32 frequency took eight.
TEST(Bm25, PostingsTakeAboutOneByteEach) {
  std::mt19937 rng(3);
  std::vector<std::string> texts;
  for (int d = 0; d < 9000; ++d) {
    std::string t;
    for (int w = 0; w < 60; ++w) t += "w" + std::to_string(std::min<uint32_t>(rng() % 2000, rng() % 2000)) + " ";
    texts.push_back(t);
  }
  std::vector<DocumentView> docs;
  std::vector<std::string> ids;
  for (size_t d = 0; d < texts.size(); ++d) ids.push_back("d" + std::to_string(d));
  for (size_t d = 0; d < texts.size(); ++d) docs.push_back({ids[d], "", texts[d]});
  const Bm25Index index = Bm25Index::build(docs, Bm25Spec{}, 2);
  int64_t postings = 0;
  for (int t = 0; t < 2000; ++t) postings += index.doc_freq("w" + std::to_string(t), 0);
  ASSERT_GT(postings, 9000 * 30);
  const double ids_and_lengths = 9000.0 * (5 + 8 + 4);
  const double per_posting = (static_cast<double>(index.image().size()) - ids_and_lengths) / static_cast<double>(postings);
  EXPECT_LT(per_posting, 2.0);
  EXPECT_EQ(index.doc_id(8999), "d8999");
  // Rows across the builder's 4,096-document blocks are scored like any other.
  const std::string q = "w1 w1500 w7";
  for (const Hit& h : index.search(q, 50)) EXPECT_NEAR(h.score, index.score(q, h.doc), 1e-5);
}

// A larger random corpus: the accumulator search must agree with the term-by-term reference score() for
// every returned document, return every document the reference scores above zero, and be the same on
// one thread and on four.
TEST(Bm25, SearchAgreesWithTheReferenceScore) {
  std::mt19937 rng(7);
  const std::vector<std::string> vocab = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                                          "iota", "kappa", "lambda", "mu", "protein", "cell", "gene", "virus"};
  std::vector<std::vector<std::string>> docs;
  for (int d = 0; d < 300; ++d) {
    std::string text;
    const int len = 1 + static_cast<int>(rng() % 60);  // lengths past 40 exercise the lossy encoding
    for (int i = 0; i < len; ++i) text.append(vocab[rng() % vocab.size()]).append(" ");
    // append, not "d" + ...: GCC 12 warns falsely (-Wrestrict) on the latter.
    docs.push_back({std::string("d").append(std::to_string(d)), d % 3 ? "gene" : "", text});
  }
  for (Bm25Fields fields : {Bm25Fields::kFlat, Bm25Fields::kMulti}) {
    Bm25Spec spec;
    spec.fields = fields;
    const Bm25Index index = Bm25Index::build(views(docs), spec, 3);
    const std::vector<std::string> queries = {"alpha beta", "gene gene protein", "virus", "kappa lambda mu cell", "nothing"};
    const auto batch = index.search_batch(queries, 1000, 4);
    for (size_t q = 0; q < queries.size(); ++q) {
      EXPECT_EQ(batch[q], index.search(queries[q], 1000));
      int64_t positive = 0;
      for (int64_t d = 0; d < index.size(); ++d) positive += index.score(queries[q], d) > 0 ? 1 : 0;
      EXPECT_EQ(static_cast<int64_t>(batch[q].size()), positive) << queries[q];
      for (size_t j = 0; j < batch[q].size(); ++j) {
        EXPECT_NEAR(batch[q][j].score, index.score(queries[q], batch[q][j].doc), 1e-5);
        if (j > 0) {
          EXPECT_GE(batch[q][j - 1].score, batch[q][j].score);
        }
      }
    }
  }
}

// The k best, in order (score descending, row ascending on ties), against a full sort of every document's
// reference score; each result holds only its k hits (a query touching the whole corpus used to keep a
// corpus-sized buffer per query: 1.3 GB for SQuAD's 9,150 test questions).
TEST(Bm25, TopKIsTheBestKOfAFullSortAndHoldsOnlyThem) {
  std::vector<std::vector<std::string>> docs;
  for (int d = 0; d < 500; ++d)
    docs.push_back({std::string("d").append(std::to_string(d)), "", std::string("common ").append(d % 7 ? "rare" : "x")});
  const Bm25Index index = Bm25Index::build(views(docs), Bm25Spec{}, 1);
  for (const int64_t k : {1, 5, 10, 499, 500, 1000}) {
    const auto hits = index.search("common rare", k);
    std::vector<Hit> all;
    for (int64_t d = 0; d < index.size(); ++d) all.push_back({d, static_cast<float>(index.score("common rare", d))});
    std::stable_sort(all.begin(), all.end(), [](const Hit& a, const Hit& b) { return a.score > b.score; });
    all.resize(static_cast<size_t>(std::min<int64_t>(k, index.size())));
    ASSERT_EQ(hits.size(), all.size()) << k;
    for (size_t i = 0; i < hits.size(); ++i) {
      EXPECT_EQ(hits[i].doc, all[i].doc) << "k " << k << " rank " << i;
      EXPECT_NEAR(hits[i].score, all[i].score, 1e-5);
    }
    EXPECT_LE(hits.capacity(), static_cast<size_t>(k)) << k;
  }
}

}  // namespace
}  // namespace ragmig::index
