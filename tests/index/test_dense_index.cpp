// FAISS indexes against the plain exact search: Flat must equal it, ANN indexes must reach a stated recall
// of it, every kind must survive save/load unchanged, and bad specs or files are refused with a reason.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/atomic_file.h"
#include "core/error.h"
#include "index/bm25_index.h"
#include "index/dense_index.h"
#include "index/exact_search.h"
#include "support/test_support.h"

namespace ragmig::index {
namespace {

// Unit vectors around 20 random centres (the same centres for every seed, so queries and documents come
// from one distribution): closer to real embeddings than uniform noise.
FloatMatrix clustered(int64_t rows, int64_t dim, uint32_t seed) {
  const int clusters = 20;
  std::mt19937 centre_rng(1234);
  std::normal_distribution<float> normal;
  FloatMatrix centres(clusters, dim);
  for (auto& v : centres.data) v = normal(centre_rng);
  std::mt19937 rng(seed);
  FloatMatrix m(rows, dim);
  for (int64_t r = 0; r < rows; ++r) {
    const float* c = centres.row(static_cast<int64_t>(rng() % static_cast<uint32_t>(clusters)));
    double norm = 0;
    for (int64_t j = 0; j < dim; ++j) {
      m.row(r)[j] = c[j] + 0.7f * normal(rng);
      norm += m.row(r)[j] * m.row(r)[j];
    }
    for (int64_t j = 0; j < dim; ++j) m.row(r)[j] = static_cast<float>(m.row(r)[j] / std::sqrt(norm));
  }
  return m;
}

TEST(ExactSearch, RanksByInnerProductWithRowOrderOnTies) {
  FloatMatrix docs(4, 2);
  docs.data = {1, 0, 0, 1, 1, 1, 1, 0};  // rows 0 and 3 are equal
  FloatMatrix queries(2, 2);
  queries.data = {1, 0, 0.5f, 2};
  const SearchResult r = exact_search(queries, docs, 3, 2);
  ASSERT_EQ(r.k, 3);
  // q0: scores 1, 0, 1, 1 -> rows 0, 2, 3 (ties by row)
  EXPECT_EQ(std::vector<int64_t>(r.ids.begin(), r.ids.begin() + 3), (std::vector<int64_t>{0, 2, 3}));
  // q1: scores 0.5, 2, 2.5, 0.5 -> rows 2, 1, 0
  EXPECT_EQ(std::vector<int64_t>(r.ids.begin() + 3, r.ids.end()), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_FLOAT_EQ(r.score(1, 0), 2.5f);
  EXPECT_EQ(exact_search(queries, docs, 10).k, 4) << "k is capped at the number of documents";
  FloatMatrix wrong(1, 3);
  EXPECT_THROW(exact_search(wrong, docs, 1), DataError);
}

TEST(ExactSearch, RecallAgainstCountsTheOverlap) {
  SearchResult exact(2, 3), approx(2, 3);
  exact.ids = {1, 2, 3, 4, 5, 6};
  approx.ids = {3, 9, 1, 6, 5, 4};
  EXPECT_DOUBLE_EQ(recall_against(approx, exact, 3), (2.0 / 3 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(recall_against(approx, exact, 1), 0.0);  // q0: {1} vs {3}; q1: {4} vs {6}
  EXPECT_DOUBLE_EQ(recall_against(exact, exact, 3), 1.0);
}

TEST(DenseIndex, FlatEqualsTheExactReference) {
  const FloatMatrix docs = clustered(3000, 48, 1), queries = clustered(200, 48, 2);
  const DenseIndex flat = DenseIndex::build(parse_dense_spec("Flat"), docs, 1);
  const SearchResult a = flat.search(queries, 10, 1), e = exact_search(queries, docs, 10, 2);
  EXPECT_DOUBLE_EQ(recall_against(a, e, 10), 1.0);
  for (size_t i = 0; i < a.scores.size(); ++i) EXPECT_NEAR(a.scores[i], e.scores[i], 1e-5);
}

struct AnnCase {
  friend std::ostream& operator<<(std::ostream& os, const AnnCase& c) { return os << c.spec; }
  std::string spec;
  double min_recall;  // recall@10 against exact search on the clustered data, with margin
};

class AnnTest : public ::testing::TestWithParam<AnnCase> {};

TEST_P(AnnTest, ReachesItsRecallAndSurvivesSaveLoad) {
  const FloatMatrix docs = clustered(4000, 32, 3), queries = clustered(300, 32, 4);
  const DenseSpec spec = parse_dense_spec(GetParam().spec);
  const DenseIndex index = DenseIndex::build(spec, docs, 1);
  EXPECT_EQ(index.size(), 4000);
  const SearchResult found = index.search(queries, 10, 1);
  const double recall = recall_against(found, exact_search(queries, docs, 10, 2), 10);
  RecordProperty("recall_at_10", std::to_string(recall));
  EXPECT_GE(recall, GetParam().min_recall) << GetParam().spec;
  EXPECT_LE(recall, 1.0);

  testing::ScratchDir dir;
  const std::string path = (dir / "index.faiss").string();
  index.save(path);
  const DenseIndex loaded = DenseIndex::load(path);
  EXPECT_EQ(loaded.spec(), spec);
  EXPECT_EQ(loaded.size(), index.size());
  const SearchResult again = loaded.search(queries, 10, 1);
  EXPECT_EQ(again.ids, found.ids);
  EXPECT_EQ(again.scores, found.scores);
}

// FAISS runs on one thread here: its many short OpenMP regions crawl when the test shares busy cores.
// Thresholds sit below what these settings reached here (HNSW32 1.00, HNSW16 at efSearch 16 0.97, IVF-PQ 0.62, PQ16 0.76,
// LSH256 0.52, LSH 0.21) and far above chance (10 / 4000).
INSTANTIATE_TEST_SUITE_P(Specs, AnnTest,
                         ::testing::Values(AnnCase{"HNSW32", 0.97}, AnnCase{"HNSW16(efSearch=16)", 0.85},
                                           AnnCase{"IVF64,Flat(nprobe=64)", 0.999}, AnnCase{"IVF64,PQ8", 0.45},
                                           AnnCase{"PQ16", 0.6}, AnnCase{"LSH256", 0.35}, AnnCase{"LSH", 0.12}),
                         [](const auto& info) {
                           std::string n;
                           for (char c : info.param.spec) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

TEST(DenseIndex, SearchParametersCanChangeAfterTheBuild) {
  const FloatMatrix docs = clustered(4000, 32, 5), queries = clustered(200, 32, 6);
  DenseIndex index = DenseIndex::build(parse_dense_spec("IVF64,Flat(nprobe=1)"), docs, 1);
  const SearchResult exact = exact_search(queries, docs, 10, 2);
  const double narrow = recall_against(index.search(queries, 10, 1), exact, 10);
  index.set_search_parameters(parse_dense_spec("IVF64,Flat(nprobe=64)"));
  EXPECT_DOUBLE_EQ(recall_against(index.search(queries, 10, 1), exact, 10), 1.0) << "all lists probed = exact";
  EXPECT_LT(narrow, 1.0);
  EXPECT_THROW(index.set_search_parameters(parse_dense_spec("HNSW32")), ConfigError);
}

// efSearch 1 alone would find little; a search for 50 results must widen the beam to 50.
TEST(DenseIndex, HnswSearchesWithAtLeastKCandidates) {
  const FloatMatrix docs = clustered(4000, 32, 9), queries = clustered(200, 32, 10);
  const DenseIndex index = DenseIndex::build(parse_dense_spec("HNSW16(efSearch=1)"), docs, 1);
  const SearchResult exact = exact_search(queries, docs, 50, 1);
  EXPECT_GE(recall_against(index.search(queries, 50, 1), exact, 50), 0.9);
  EXPECT_LT(recall_against(index.search(queries, 1, 1), exact, 1), recall_against(index.search(queries, 50, 1), exact, 1))
      << "with efSearch 1, the single best is found less often than within a 50-wide beam";
}

TEST(DenseIndex, RefusesSpecsThatCannotWork) {
  const FloatMatrix few = clustered(100, 30, 7);
  EXPECT_THROW(DenseIndex(parse_dense_spec("PQ8"), 30), ConfigError) << "8 does not divide 30";
  EXPECT_THROW(DenseIndex::build(parse_dense_spec("IVF256,Flat"), few), ConfigError) << "fewer vectors than lists";
  EXPECT_THROW(DenseIndex::build(parse_dense_spec("PQ10"), few), ConfigError) << "PQ needs 256 training vectors";
  const DenseIndex flat = DenseIndex::build(parse_dense_spec("Flat"), few);
  FloatMatrix wrong(1, 31);
  EXPECT_THROW(flat.search(wrong, 5), DataError);
}

TEST(DenseIndex, DamagedOrForeignFilesAreRefused) {
  testing::ScratchDir dir;
  const std::string path = (dir / "flat.faiss").string();
  DenseIndex::build(parse_dense_spec("HNSW8"), clustered(500, 16, 8)).save(path);
  std::string bytes = read_file(path);
  bytes[bytes.size() - 20] ^= 1;
  write_file_atomic(path, bytes);
  EXPECT_THROW(DenseIndex::load(path), DataError);
  const std::string bm25 = (dir / "x.bm25").string();
  const std::string id = "d", text = "words";
  Bm25Index::build({DocumentView{id, "", text}}, Bm25Spec{}).save(bm25);
  try {
    DenseIndex::load(bm25);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("not a ragmig dense index"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ragmig::index
