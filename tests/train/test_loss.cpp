// InfoNCE against its row-by-row reference, and the LR schedule, table-driven.
#include "train/contrastive_loss.h"

#include <gtest/gtest.h>

#include "train/lr_schedule.h"

namespace ragmig::train {
namespace {

struct LossCase {
  friend std::ostream& operator<<(std::ostream& os, const LossCase& c) {
    return os << "B" << c.b << "_D" << c.d << "_N" << c.n << "_scale" << c.scale;
  }
  int64_t b, d, n;  // queries, dims, shared negatives
  double scale;
};

class InfoNceTest : public ::testing::TestWithParam<LossCase> {};

TEST_P(InfoNceTest, FusedEqualsReferenceInValueAndGradient) {
  const auto c = GetParam();
  torch::manual_seed(3);
  auto q = torch::nn::functional::normalize(torch::randn({c.b, c.d}), torch::nn::functional::NormalizeFuncOptions().dim(1));
  auto p = torch::nn::functional::normalize(torch::randn({c.b, c.d}), torch::nn::functional::NormalizeFuncOptions().dim(1));
  auto n = c.n > 0 ? torch::randn({c.n, c.d}) : torch::Tensor();
  auto q1 = q.clone().requires_grad_(true), q2 = q.clone().requires_grad_(true);
  // The reference sums in float64; float32 rounding of the fused path, times the scale, bounds the gap.
  auto s = torch::full({}, c.scale);
  auto fused = info_nce_loss(q1, p, n, s);
  auto ref = info_nce_loss_reference(q2, p, n, s);
  fused.backward();
  ref.backward();
  EXPECT_NEAR(fused.item<double>(), ref.item<double>(), 1e-5);
  EXPECT_LT((q1.grad() - q2.grad()).abs().max().item<double>(), 1e-6 * c.scale);
}

INSTANTIATE_TEST_SUITE_P(Shapes, InfoNceTest,
                         ::testing::Values(LossCase{2, 4, 0, 1.0}, LossCase{8, 16, 0, 20.0}, LossCase{8, 16, 8, 20.0},
                                           LossCase{5, 3, 15, 50.0}));

TEST(InfoNce, HandComputedTwoByTwo) {
  // q0·p0 = 1, q0·p1 = 0, q1·p0 = 0, q1·p1 = 1; scale 1: loss = log(1 + e^-1) for both rows.
  auto q = torch::eye(2);
  auto p = torch::eye(2);
  auto loss = info_nce_loss(q, p, torch::Tensor(), torch::ones({}));
  EXPECT_NEAR(loss.item<double>(), std::log(1.0 + std::exp(-1.0)), 1e-6);
  // A hard negative equal to the positive doubles the positive's competitor mass: log(2 + e^-1).
  auto with_neg = info_nce_loss(q.slice(0, 0, 1), p.slice(0, 0, 1), p.slice(0, 0, 1), torch::ones({}));
  EXPECT_NEAR(with_neg.item<double>(), std::log(2.0), 1e-6);
}

// Default terms are InfoNCE itself (the same kernel: bit-exact); sentence-transformers' symmetric loss is the mean of
// InfoNCE both ways, each by the row-by-row reference; the other terms and hardness are checked against
// sentence-transformers itself (test_st_loss.cpp).
TEST(MultipleNegativesLoss, DefaultIsInfoNceAndPerDirectionSymmetricIsTheMeanOfBothWays) {
  torch::manual_seed(5);
  namespace F = torch::nn::functional;
  const auto unit = [](const torch::Tensor& x) { return F::normalize(x, F::NormalizeFuncOptions().dim(1)); };
  const auto q = unit(torch::randn({6, 12}, torch::kDouble)), p = unit(torch::randn({6, 12}, torch::kDouble));
  const auto negs = unit(torch::randn({12, 12}, torch::kDouble));
  const auto scale = torch::full({}, 20.0, torch::kDouble);
  EXPECT_EQ(multiple_negatives_loss(q, p, negs, scale, {}).item<double>(), info_nce_loss(q, p, negs, scale).item<double>());
  LossTerms symmetric;
  symmetric.doc_to_query = true;
  symmetric.per_direction = true;
  const double both_ways = (info_nce_loss_reference(q, p, negs, scale).item<double>() +
                            info_nce_loss_reference(p, q, torch::Tensor(), scale).item<double>()) / 2;
  EXPECT_NEAR(multiple_negatives_loss(q, p, negs, scale, symmetric).item<double>(), both_ways, 1e-9);
  LossTerms joint = symmetric;
  joint.per_direction = false;  // one softmax over both: a larger partition, a larger loss
  EXPECT_GT(multiple_negatives_loss(q, p, negs, scale, joint).item<double>(),
            multiple_negatives_loss(q, p, negs, scale, symmetric).item<double>());
  LossTerms hardness;
  hardness.hardness_mode = "hard_negatives";
  hardness.hardness_strength = 5;
  EXPECT_THROW(multiple_negatives_loss(q, p, negs.slice(0, 0, 7), scale, hardness), c10::Error)
      << "7 hard negatives for 6 queries";
}

// The Matryoshka loss is the sum over sizes d of the reference InfoNCE on each d-prefix, renormalised for a cosine
// model and as it is for a dot-product one; without sizes it is InfoNCE itself.
TEST(MatryoshkaLoss, SumsTheReferenceLossOfEachPrefix) {
  torch::manual_seed(4);
  namespace F = torch::nn::functional;
  const auto unit = [](const torch::Tensor& x) { return F::normalize(x, F::NormalizeFuncOptions().dim(1)); };
  const auto q = unit(torch::randn({6, 12}, torch::kDouble)), p = unit(torch::randn({6, 12}, torch::kDouble));
  const auto negs = unit(torch::randn({4, 12}, torch::kDouble));
  const auto scale = torch::full({}, 20.0, torch::kDouble);
  EXPECT_EQ(contrastive_loss(q, p, negs, scale, {}).item<double>(), info_nce_loss(q, p, negs, scale).item<double>());
  for (const bool renormalize : {true, false}) {
    const LossSpec m{{12, 5, 2}, renormalize};
    double expected = 0;
    for (const int64_t d : m.dims) {
      const auto head = [&](const torch::Tensor& x) {
        const auto h = x.narrow(1, 0, d);
        return renormalize ? unit(h) : h;
      };
      expected += info_nce_loss_reference(head(q), head(p), head(negs), scale).item<double>();
    }
    EXPECT_NEAR(contrastive_loss(q, p, negs, scale, m).item<double>(), expected, 1e-9) << renormalize;
  }
  // Prefixes of unit vectors are not unit vectors: renormalising changes the small sizes' terms.
  EXPECT_GT(std::abs(contrastive_loss(q, p, negs, scale, {{2}, true}).item<double>() -
                     contrastive_loss(q, p, negs, scale, {{2}, false}).item<double>()),
            1e-3);
  EXPECT_THROW(contrastive_loss(q, p, negs, scale, {{13}, true}), c10::Error);
}

struct LrCase {
  int64_t step, total, warmup;
  double expected;
};

TEST(LrSchedule, WarmupThenLinearDecay) {
  const LrCase cases[] = {
      {1, 100, 10, 0.1},  {5, 100, 10, 0.5},   {10, 100, 10, 1.0},  {11, 100, 10, 1.0},
      {55, 100, 10, 46.0 / 90}, {100, 100, 10, 1.0 / 90}, {1, 10, 0, 1.0}, {10, 10, 0, 0.1},
  };
  for (const auto& c : cases)
    EXPECT_NEAR(linear_warmup_decay_lr(c.step, c.total, c.warmup, 1.0), c.expected, 1e-12)
        << "step " << c.step << " of " << c.total << ", warmup " << c.warmup;
}

}  // namespace
}  // namespace ragmig::train
