// The throughput model: tables read and written, and each rule of the lookup with its fallback, on
// hand-made tables and on MISO's measured one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "sim/throughput.h"
#include "support/test_support.h"

namespace ragmig::sim {
namespace {

SlotShape mig(const std::string& profile) { return {sched::SlotKind::Mig, profile, profile_compute(profile)}; }
SlotShape whole(const std::string& model) { return {sched::SlotKind::Gpu, model, 7}; }
SlotShape cpu() { return {sched::SlotKind::Cpu, "cpu", 1}; }

TEST(ThroughputTable, ReadsMisoFormatAndRoundTrips) {
  const std::string text =
      "# a comment\n"
      "bert_train2 {\"2g.10gb\": 0.1213, \"7g.40gb\": 0.0472}\n"
      "\n"
      "sleep {\"cpu\": 2.5}\n";
  const auto table = parse_throughput_table(text, "t.txt");
  ASSERT_EQ(table.size(), 2u);
  EXPECT_DOUBLE_EQ(table.at("bert_train2").at("2g.10gb"), 0.1213);
  EXPECT_DOUBLE_EQ(table.at("sleep").at("cpu"), 2.5);
  EXPECT_EQ(parse_throughput_table(format_throughput_table(table), "again"), table);
}

TEST(ThroughputTable, BadLinesNameFileAndLine) {
  for (const char* bad : {"x\n", "x {}\n", "x [1]\n", "x {\"1g.5gb\": -1}\n", "x {\"1g.5gb\": \"fast\"}\n",
                          "x {\"1g.5gb\": 0}\n", "x {\"a\": 1}\nx {\"b\": 1}\n", "x {\"1g.5gb\": 1\n",
                          "x {\"1g.5gb\": 1e-10}\n", "x {\"7g.40gb\": 1.5e9}\n"}) {
    try {
      parse_throughput_table(std::string("# header\n") + bad, "m.txt");
      ADD_FAILURE() << bad;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), ::testing::StartsWith("m.txt:")) << bad;
    }
  }
}

TEST(ThroughputModel, LookupRules) {
  ThroughputTable t;
  t["a"] = {{"2g.10gb", 0.2}, {"4g.20gb", 0.1}, {"V100", 0.3}, {"cpu", 5}};
  t["one"] = {{"3g.20gb", 0.6}};
  const auto model = make_throughput_model({t});
  EXPECT_DOUBLE_EQ(model.fallback_exponent, 1.0);  // "a" halves its time per doubling: b = 1
  // 1. exact profile; a whole GPU by its model name; CPU.
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "a", mig("2g.10gb")), 0.2);
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "a", whole("V100")), 0.3);
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "a", cpu()), 5);
  // 2. same compute slices on another GPU model.
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "a", mig("2g.35gb")), 0.2);
  // 3. power law from the nearest measured size: 1g from 2g (x2), 7g from 4g (x 4/7).
  EXPECT_NEAR(seconds_per_iteration(model, "a", mig("1g.18gb")), 0.4, 1e-12);
  EXPECT_NEAR(seconds_per_iteration(model, "a", whole("H200")), 0.1 * 4.0 / 7.0, 1e-12);
  //    one measured size: the fallback exponent.
  EXPECT_NEAR(seconds_per_iteration(model, "one", mig("1g.5gb")), 0.6 * 3.0, 1e-12);
  // 4. unknown type: iterations are whole-GPU seconds.
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "philly", whole("V100")), 1.0);
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "philly", cpu()), 1.0);
  EXPECT_NEAR(seconds_per_iteration(model, "philly", mig("1g.18gb")), 7.0, 1e-12);
  // A type measured on CPU only runs on a GPU by the fallback.
  ThroughputTable c;
  c["sleep"] = {{"cpu", 2}};
  EXPECT_DOUBLE_EQ(seconds_per_iteration(make_throughput_model({c}), "sleep", whole("V100")), 1.0);
}

TEST(ThroughputModel, LaterTablesOverrideEarlier) {
  ThroughputTable a, b;
  a["x"] = {{"cpu", 1}, {"1g.5gb", 3}};
  b["x"] = {{"cpu", 2}};
  const auto model = make_throughput_model({a, b});
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "x", cpu()), 2);
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "x", mig("1g.5gb")), 3);
}

TEST(ThroughputModel, FittedExponent) {
  EXPECT_FALSE(fitted_exponent({{"cpu", 1}}).has_value());
  EXPECT_FALSE(fitted_exponent({{"1g.5gb", 1}, {"1g.10gb", 2}}).has_value());
  EXPECT_NEAR(*fitted_exponent({{"1g.5gb", 1}, {"4g.20gb", 0.5}}), 0.5, 1e-12);
  EXPECT_EQ(profile_compute("3g.71gb"), 3);
  EXPECT_EQ(profile_compute("1g.18gb+me"), 1);
  EXPECT_EQ(profile_compute("V100"), 0);
  EXPECT_EQ(profile_compute("cpu"), 0);
}

TEST(ThroughputModel, MisoTable) {
  RAGMIG_REQUIRE_DATA("traces/miso-a100-mig-iteration-seconds.txt");
  const auto table =
      read_throughput_table((testing::data_dir() / "traces/miso-a100-mig-iteration-seconds.txt").string());
  EXPECT_EQ(table.size(), 32u);
  const auto model = make_throughput_model({table});
  // The median over MISO's types of how time falls with slices: clearly sublinear.
  EXPECT_NEAR(model.fallback_exponent, 0.73, 0.01);
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "bert_train2", mig("2g.10gb")), 0.1213);
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "bert_train2", whole("A100-40GB")), 0.0472);
  EXPECT_DOUBLE_EQ(seconds_per_iteration(model, "resnet_train64", mig("1g.18gb")), 0.0489);
  // bert_train2 was never measured on a 1g slice (it did not fit 5 GB): extrapolated, slower than 2g.
  const double one = seconds_per_iteration(model, "bert_train2", mig("1g.18gb"));
  EXPECT_GT(one, 0.1213);
  EXPECT_LT(one, 0.1213 * 2);
}

}  // namespace
}  // namespace ragmig::sim
