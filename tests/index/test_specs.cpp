// Spec strings round-trip (to_string(parse(s)) == s for every canonical spec) and every malformed one is a
// ConfigError that quotes it.
#include <gtest/gtest.h>

#include "core/error.h"
#include "index/bm25_spec.h"
#include "index/dense_spec.h"

namespace ragmig::index {
namespace {

class DenseRoundTrip : public ::testing::TestWithParam<std::string> {};
TEST_P(DenseRoundTrip, ToStringOfParseIsIdentity) { EXPECT_EQ(to_string(parse_dense_spec(GetParam())), GetParam()); }
INSTANTIATE_TEST_SUITE_P(Specs, DenseRoundTrip,
                         ::testing::Values("Flat", "HNSW32", "IVF1024,PQ32", "LSH", "LSH1024", "IVF256,Flat", "PQ16",
                                           "HNSW32(efSearch=128)", "HNSW16(efSearch=64,efConstruction=80)",
                                           "IVF1024,PQ32(nprobe=32)"));

class Bm25RoundTrip : public ::testing::TestWithParam<std::string> {};
TEST_P(Bm25RoundTrip, ToStringOfParseIsIdentity) { EXPECT_EQ(to_string(parse_bm25_spec(GetParam())), GetParam()); }
INSTANTIATE_TEST_SUITE_P(Specs, Bm25RoundTrip,
                         ::testing::Values("BM25(k1=0.9,b=0.4)", "BM25(k1=1.2,b=0.75)", "BM25(k1=0.9,b=0.4,fields=multi)",
                                           "BM25(k1=0.82,b=0.68,stemmer=english,length=exact)",
                                           "BM25(k1=0,b=1,stemmer=none)"));

TEST(Specs, ParsedValuesAreTheWrittenOnes) {
  const DenseSpec ivf = parse_dense_spec("IVF1024,PQ32(nprobe=32)");
  EXPECT_EQ(ivf.kind, DenseKind::kIvfPq);
  EXPECT_EQ(ivf.nlist, 1024);
  EXPECT_EQ(ivf.pq_m, 32);
  EXPECT_EQ(ivf.effective_nprobe(), 32);
  EXPECT_EQ(ivf.factory(), "IVF1024,PQ32");
  EXPECT_EQ(parse_dense_spec("IVF1024,PQ32").effective_nprobe(), 64);
  EXPECT_EQ(parse_dense_spec("IVF16,Flat").effective_nprobe(), 8);
  EXPECT_EQ(parse_dense_spec("HNSW32").effective_ef_search(), kDefaultEfSearch);
  EXPECT_EQ(parse_dense_spec("HNSW32(efSearch=99)").effective_ef_search(), 99);
  const Bm25Spec bm25 = parse_bm25_spec("BM25(k1=1.2,b=0.75,fields=multi)");
  EXPECT_DOUBLE_EQ(bm25.k1, 1.2);
  EXPECT_DOUBLE_EQ(bm25.b, 0.75);
  EXPECT_EQ(bm25.fields, Bm25Fields::kMulti);
  // Shorthand takes the defaults and prints canonically.
  EXPECT_EQ(to_string(parse_bm25_spec("BM25")), "BM25(k1=0.9,b=0.4)");
  EXPECT_EQ(to_string(parse_bm25_spec("BM25(b=0.4, k1=0.9)")), "BM25(k1=0.9,b=0.4)");
}

class BadSpec : public ::testing::TestWithParam<std::string> {};
TEST_P(BadSpec, IsAConfigErrorQuotingIt) {
  const std::string& s = GetParam();
  try {
    if (s.rfind("BM25", 0) == 0) parse_bm25_spec(s);
    else parse_dense_spec(s);
    FAIL() << s << " was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(s.substr(0, 4)), std::string::npos) << e.what();
  }
}
INSTANTIATE_TEST_SUITE_P(Specs, BadSpec,
                         ::testing::Values("HNSW", "HNSW032", "HNSW32,Flat", "IVF1024,PQ", "IVF1024", "Flat(nprobe=2)",
                                           "HNSW32(nprobe=4)", "IVF16,Flat(efSearch=3)", "IVF16,Flat(nprobe=32)",
                                           "HNSW32(efSearch=0)", "HNSW32(efSearch=1", "HNSW32(efSearch)",
                                           "BM25(k1=-1,b=0.4)", "BM25(k1=0.9,b=2)", "BM25(k=1)", "BM25(k1=0.9",
                                           "BM25(k1=0.9,k1=1)", "BM25(k1=x)", "BM25(fields=both)", "BM25(k1=0.9,)",
                                           "BM25x", "flat"));

}  // namespace
}  // namespace ragmig::index
