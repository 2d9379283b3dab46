// Packing jobs onto one GPU by throughput: one job gets the whole GPU, jobs that gain from packing are
// packed, fixed instances stay, jobs stay where they are when moving gains nothing, too many jobs have no
// packing, and the search (which skips layouts that cannot win) finds what trying every layout and every
// assignment finds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "gpu/mig_catalog.h"
#include "gpu/packing.h"

namespace ragmig::gpu {
namespace {

const GpuCatalog& h200() { return gpu_catalog("H200"); }

// A job's row: speed (g/7)^b on a profile of g compute slices with at least `min_gb` of memory, 0 elsewhere
// (and on media-extension profiles, which packing never uses).
std::vector<double> row(double b, int min_gb = 0) {
  std::vector<double> r;
  for (const auto& p : h200().profiles) {
    const bool fits = !p.media_extensions() && parse_profile_name(p.name).memory_gb >= min_gb;
    r.push_back(fits ? std::pow(p.compute_slices / 7.0, b) : 0.0);
  }
  return r;
}

int compute(const Placement& p) { return h200().profiles[static_cast<size_t>(p.profile)].compute_slices; }

TEST(Packing, OneJobGetsTheWholeGpu) {
  const auto p = best_packing(h200(), {row(0.7)}, {});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(compute(p->instance_of[0]), 7);
  EXPECT_DOUBLE_EQ(p->throughput, 1.0);
}

TEST(Packing, SevenJobsThatGainFromPackingGetASliceEach) {
  const SpeedTable t(7, row(0.4));
  const auto p = best_packing(h200(), t, {});
  ASSERT_TRUE(p.has_value());
  for (const auto& at : p->instance_of) EXPECT_EQ(compute(at), 1);
  EXPECT_NEAR(p->throughput, 7 * std::pow(1 / 7.0, 0.4), 1e-9);
  EXPECT_FALSE(best_packing(h200(), SpeedTable(8, row(0.4)), {}).has_value());  // 7 compute slices
}

TEST(Packing, TwoUnequalJobsSplitTheGpuAndTheFasterScalerGetsMore) {
  // Job 0 scales well (b = 1), job 1 hardly at all (b = 0.1): the large slice goes to job 0.
  const auto p = best_packing(h200(), {row(1.0), row(0.1)}, {});
  ASSERT_TRUE(p.has_value());
  EXPECT_GT(compute(p->instance_of[0]), compute(p->instance_of[1]));
  EXPECT_EQ(compute(p->instance_of[0]) + compute(p->instance_of[1]), 7);
}

TEST(Packing, MemoryLimitsWhereAJobMayGo) {
  // Needs 40 GB: the smallest H200 instance with that much is a 3g.71gb.
  const auto p = best_packing(h200(), {row(0.5, 40), row(0.5, 40), row(0.5, 40)}, {});
  ASSERT_FALSE(p.has_value());  // three 3g instances do not fit in 7 compute slices
  const auto two = best_packing(h200(), {row(0.5, 40), row(0.5, 40)}, {});
  ASSERT_TRUE(two.has_value());
  for (const auto& at : two->instance_of) EXPECT_GE(parse_profile_name(h200().profiles[static_cast<size_t>(at.profile)].name).memory_gb, 40);
}

TEST(Packing, FixedInstancesStayAndTakeTheirRoom) {
  const Layout fixed = parse_layout(h200(), "4g.71gb@0");
  const auto p = best_packing(h200(), {row(0.7)}, fixed);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(compute(p->instance_of[0]), 3);
  EXPECT_NE(p->instance_of[0], fixed[0]);
}

TEST(Packing, AJobStaysOnItsInstanceWhenMovingGainsNothing) {
  // Seven equal jobs on seven 1g slices: every permutation is as fast; each keeps its own.
  const Layout now = parse_layout(h200(), "1g.18gb@0+1g.18gb@1+1g.18gb@2+1g.18gb@3+1g.18gb@4+1g.18gb@5+1g.18gb@6");
  std::vector<std::optional<Placement>> current(now.rbegin(), now.rend());
  const auto p = best_packing(h200(), SpeedTable(7, row(0.4)), {}, current);
  ASSERT_TRUE(p.has_value());
  for (size_t j = 0; j < 7; ++j) EXPECT_EQ(p->instance_of[j], *current[j]) << j;
}

// The best summed speed of `speed` over every maximal layout around `fixed` and every way of giving each job an
// instance of its own it runs on: what best_packing must find.
double exhaustive(const SpeedTable& speed, const Layout& fixed) {
  std::vector<std::string> plain;
  for (const auto& p : h200().profiles)
    if (!p.media_extensions()) plain.push_back(p.name);
  double best = -1;
  for (const Layout& layout : enumerate_layouts(h200(), {.maximal_only = true, .profiles = plain, .base = fixed})) {
    std::vector<Placement> free;
    for (const auto& p : layout)
      if (std::find(fixed.begin(), fixed.end(), p) == fixed.end()) free.push_back(p);
    std::vector<char> used(free.size(), 0);
    const auto place = [&](auto&& self, size_t j, double sum) -> void {
      if (j == speed.size()) {
        best = std::max(best, sum);
        return;
      }
      for (size_t s = 0; s < free.size(); ++s) {
        const double v = speed[j][static_cast<size_t>(free[s].profile)];
        if (used[s] || !(v > 0)) continue;
        used[s] = 1;
        self(self, j + 1, sum + v);
        used[s] = 0;
      }
    };
    place(place, 0, 0.0);
  }
  return best;
}

TEST(Packing, FindsWhatTryingEveryLayoutFinds) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(0.0, 1.2);
  std::uniform_int_distribution<int> jobs(1, 5), memory(0, 40), weight(1, 4);
  const std::vector<Layout> fixed{{}, parse_layout(h200(), "3g.71gb@4")};
  for (int trial = 0; trial < 150; ++trial) {
    SpeedTable t;
    const int n = jobs(rng);
    for (int j = 0; j < n; ++j) {
      auto r = row(exponent(rng), memory(rng));
      for (double& v : r) v *= weight(rng);  // jobs weighed unequally, as the rebalancer's rows are
      t.push_back(r);
    }
    const Layout& f = fixed[static_cast<size_t>(trial % 2)];
    const double want = exhaustive(t, f);
    const auto got = best_packing(h200(), t, f);
    ASSERT_EQ(got.has_value(), want >= 0) << trial;
    if (got) {
      EXPECT_NEAR(got->throughput, want, 1e-5) << trial;
    }
  }
}

}  // namespace
}  // namespace ragmig::gpu
