// Fusion of two ranked lists, with the expected fused scores computed by hand.
#include <gtest/gtest.h>

#include "core/error.h"
#include "index/fusion.h"

namespace ragmig::index {
namespace {

// First list (dense): rows 1, 2, 3 with scores 10, 6, 2. Second (BM25): rows 3, 1, 4 with 0.9, 0.5, 0.1.
const std::vector<Hit> kFirst = {{1, 10}, {2, 6}, {3, 2}};
const std::vector<Hit> kSecond = {{3, 0.9f}, {1, 0.5f}, {4, 0.1f}};

std::vector<int64_t> rows(const std::vector<Hit>& hits) {
  std::vector<int64_t> out;
  for (const Hit& h : hits) out.push_back(h.doc);
  return out;
}

TEST(Fusion, ReciprocalRankByHand) {
  // 1: 1/61 + 1/62 = 0.0325225;  3: 1/63 + 1/61 = 0.0322665;  2: 1/62 = 0.0161290;  4: 1/63 = 0.0158730
  const auto fused = fuse_rrf({kFirst, kSecond}, 60, 10);
  EXPECT_EQ(rows(fused), (std::vector<int64_t>{1, 3, 2, 4}));
  EXPECT_NEAR(fused[0].score, 0.0325225, 1e-7);
  EXPECT_NEAR(fused[1].score, 0.0322665, 1e-7);
  EXPECT_NEAR(fused[3].score, 0.0158730, 1e-7);
  EXPECT_EQ(rows(fuse_rrf({kFirst, kSecond}, 60, 2)), (std::vector<int64_t>{1, 3})) << "depth cuts";
  // Ties go to the lower row: rows 5 and 7 both rank first once.
  EXPECT_EQ(rows(fuse_rrf({{{7, 1}}, {{5, 1}}}, 60, 10)), (std::vector<int64_t>{5, 7}));
}

TEST(Fusion, NormalisedLinearByHand) {
  // Min-max: first 1 -> 1, 2 -> 0.5, 3 -> 0; second 3 -> 1, 1 -> 0.5, 4 -> 0.
  // alpha 0.7: 1: 0.7 + 0.15 = 0.85;  2: 0.35;  3: 0.3;  4: 0.
  auto fused = fuse(parse_fusion_spec("Linear(alpha=0.7)"), kFirst, kSecond, 10);
  EXPECT_EQ(rows(fused), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_NEAR(fused[0].score, 0.85, 1e-6);
  EXPECT_NEAR(fused[1].score, 0.35, 1e-6);
  EXPECT_NEAR(fused[2].score, 0.30, 1e-6);
  EXPECT_NEAR(fused[3].score, 0.0, 1e-6);
  // alpha 0.5: 1: 0.75, 3: 0.5, 2: 0.25, 4: 0
  fused = fuse(parse_fusion_spec("Linear"), kFirst, kSecond, 10);
  EXPECT_EQ(rows(fused), (std::vector<int64_t>{1, 3, 2, 4}));
  EXPECT_NEAR(fused[1].score, 0.5, 1e-6);
  // A list of equal scores gives each of its documents the full weight; an empty list gives nothing.
  fused = fuse_linear({{{2, 3}, {8, 3}}, {}}, {0.4, 0.6}, 10);
  EXPECT_EQ(rows(fused), (std::vector<int64_t>{2, 8}));
  EXPECT_NEAR(fused[0].score, 0.4, 1e-6);
}

TEST(Fusion, ALinearWeightOfZeroLeavesTheOtherListAlone) {
  // alpha 0 is BM25's ranking, alpha 1 the dense one: no document of the list weighted 0 enters, not even at 0.
  EXPECT_EQ(rows(fuse(parse_fusion_spec("Linear(alpha=0)"), kFirst, kSecond, 10)), rows(kSecond));
  EXPECT_EQ(rows(fuse(parse_fusion_spec("Linear(alpha=1)"), kFirst, kSecond, 10)), rows(kFirst));
  EXPECT_EQ(to_string(parse_fusion_spec("Linear(alpha=0)")), "Linear(alpha=0)");
  EXPECT_EQ(to_string(parse_fusion_spec("Linear(alpha=1)")), "Linear(alpha=1)");
}

TEST(Fusion, SpecsRoundTripAndRefuseNonsense) {
  for (const char* s : {"RRF(k=60)", "RRF(k=10.5)", "Linear(alpha=0.5)", "Linear(alpha=0.25)"})
    EXPECT_EQ(to_string(parse_fusion_spec(s)), s);
  EXPECT_EQ(to_string(parse_fusion_spec("RRF")), "RRF(k=60)");
  for (const char* s : {"rrf", "RRF(alpha=0.5)", "Linear(alpha=1.5)", "Linear(k=60)", "RRF(k=-1)", "RRF(k=x)"})
    EXPECT_THROW(parse_fusion_spec(s), ConfigError) << s;
}

}  // namespace
}  // namespace ragmig::index
