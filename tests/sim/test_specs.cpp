// Spec strings of the simulator round-trip and fail clearly: cluster specs, workload specs, policy lists;
// clusters give the slots they describe; the generated sweep is reproducible and as documented.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.h"
#include "sim/cluster.h"
#include "sim/simulation.h"
#include "sim/sweep.h"
#include "sim/workload.h"

namespace ragmig::sim {
namespace {

using ::testing::HasSubstr;

TEST(ClusterSpec, RoundTrips) {
  for (const char* s : {"1000xV100", "64xA100-40GB", "8xH200:mig=7x1g.18gb", "8xH200:mig=auto", "3xcpu",
                        "2xH200:mig=3g.71gb+2g.35gb+1g.18gb+1g.18gb,4xV100-16GB,2xcpu", "1xA30:mig=4x1g.6gb"})
    EXPECT_EQ(to_string(parse_cluster_spec(s)), s);
  // Mixes are written canonically.
  EXPECT_EQ(to_string(parse_cluster_spec("1xH200:mig=1g.18gb+3g.71gb")), "1xH200:mig=3g.71gb+1g.18gb");
}

TEST(ClusterSpec, BadSpecsNameThePart) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "empty"},
      {"V100", "no count"},
      {"0xV100", "count"},
      {"-3xV100", "count"},
      {"8xTPU", "unknown model 'TPU'"},
      {"8xA100", "unknown model 'A100'"},  // 40 or 80 GB: ambiguous
      {"8xV100:mig=auto", "no MIG"},
      {"8xH200:mig=8x1g.18gb", "does not fit one H200"},
      {"8xH200:mig=2g.5gb", "mig"},
      {"8xH200:mps=2", "unknown option"},
      {"8xH200,", "no count"}};
  for (const auto& [spec, why] : bad) {
    try {
      build_cluster(parse_cluster_spec(spec));
      ADD_FAILURE() << spec;
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr(why)) << spec;
    }
  }
}

TEST(Cluster, Slots) {
  const Cluster c = build_cluster(parse_cluster_spec("1xH200:mig=3g.71gb+4x1g.18gb,9xV100,1xH200:mig=auto,2xcpu"));
  ASSERT_EQ(c.gpus.size(), 11u);
  EXPECT_EQ(c.cpu_slots, 2);
  EXPECT_EQ(c.capacity(), 7 * 11 + 2);
  EXPECT_TRUE(c.has_auto());
  const auto slots = cluster_slots(c);
  ASSERT_EQ(slots.size(), 5u + 9u + 0u + 2u);  // the auto GPU starts with no instances
  EXPECT_EQ(slots[0].id, "gpu0/3g.71gb@4");
  EXPECT_EQ(slots[0].compute, 3);
  EXPECT_EQ(slots[0].memory_mb, 71 * 1024);
  EXPECT_DOUBLE_EQ(slots[0].speed, 3.0 / 7.0);
  EXPECT_EQ(slots[1].profile, "1g.18gb");
  EXPECT_EQ(slots[1].memory_mb, 18 * 1024);  // what parse_need reads from "1g.18gb"
  EXPECT_TRUE(sched::fits(sched::parse_need("1g.18gb:1"), slots[1]));
  EXPECT_EQ(slots[5].id, "gpu1");
  EXPECT_EQ(slots[5].kind, sched::SlotKind::Gpu);
  EXPECT_EQ(slots[5].compute, 7);
  EXPECT_EQ(slots[5].memory_mb, 32 * 1024);
  EXPECT_EQ(slots[5].group, 0);   // GPUs 0..7 share a host
  EXPECT_EQ(slots[13].id, "gpu9");
  EXPECT_EQ(slots[13].group, 1);
  EXPECT_EQ(slots[14].id, "cpu0");
  EXPECT_EQ(slots[14].kind, sched::SlotKind::Cpu);
  std::set<std::string> ids;
  for (const auto& s : slots) EXPECT_TRUE(ids.insert(s.id).second) << s.id;
}

TEST(Cluster, Placeable) {
  const Cluster mig7 = build_cluster(parse_cluster_spec("2xH200:mig=7x1g.18gb"));
  EXPECT_TRUE(placeable(sched::parse_need("10gb:14"), mig7));
  EXPECT_FALSE(placeable(sched::parse_need("10gb:15"), mig7));
  EXPECT_FALSE(placeable(sched::parse_need("gpu:1"), mig7));
  EXPECT_FALSE(placeable(sched::parse_need("cpu:1"), mig7));
  const Cluster automatic = build_cluster(parse_cluster_spec("2xH200:mig=auto"));
  EXPECT_TRUE(placeable(sched::parse_need("gpu:2"), automatic));
  EXPECT_TRUE(placeable(sched::parse_need("3g.71gb:4"), automatic));
  EXPECT_FALSE(placeable(sched::parse_need("3g.71gb:5"), automatic));
  EXPECT_FALSE(placeable(sched::parse_need("200gb:1"), automatic));
  EXPECT_TRUE(placeable(sched::parse_need("gpu:128"), build_cluster(parse_cluster_spec("1000xV100"))));
}

TEST(WorkloadSpec, RoundTripsAndRejects) {
  for (const char* s : {"philly:/data/philly.csv", "openb:a.csv", "sweep:28", "jobs:x/y.csv"})
    EXPECT_EQ(to_string(parse_workload_spec(s)), s);
  for (const char* bad : {"", "sweep", "sweep:0", "sweep:-1", "sweep:x", "sweep:012", "philly:", "trace:x", "sweep:1e3"})
    EXPECT_THROW(parse_workload_spec(bad), ConfigError) << bad;
}

TEST(PolicyList, SplitsOutsideParentheses) {
  EXPECT_EQ(split_policy_list("fifo"), std::vector<std::string>{"fifo"});
  EXPECT_EQ(split_policy_list("fifo,las(thresholds=60:600,min_run=0),srtf"),
            (std::vector<std::string>{"fifo", "las(thresholds=60:600,min_run=0)", "srtf"}));
  EXPECT_THROW(split_policy_list("fifo,,las"), ConfigError);
  EXPECT_THROW(split_policy_list("fifo,"), ConfigError);
}

TEST(Sweep, ReproducibleAndAsDocumented) {
  const ThroughputModel model = make_throughput_model({});
  const auto a = generate_sweep(500, model, 7), b = generate_sweep(500, model, 7), c = generate_sweep(500, model, 8);
  ASSERT_EQ(a.size(), 500u);
  int bert2 = 0;
  std::set<int64_t> priorities;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].iterations, b[i].iterations);
    EXPECT_EQ(a[i].type, b[i].type);
    EXPECT_EQ(a[i].arrival, 0);
    EXPECT_GE(a[i].iterations, 5000);
    EXPECT_LE(a[i].iterations, 100000);
    EXPECT_EQ(sched::to_string(a[i].need), "10gb:1");
    EXPECT_DOUBLE_EQ(a[i].estimate_s, a[i].iterations);  // no table: a whole GPU runs 1 s per iteration
    bert2 += a[i].type == "bert_train2";
    priorities.insert(a[i].priority);
  }
  EXPECT_NEAR(bert2 / 500.0, 0.6, 0.07);
  EXPECT_EQ(priorities, (std::set<int64_t>{0, 1, 2}));
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i].iterations == c[i].iterations;
  EXPECT_LT(same, 10);
  // Log-uniform: about half of the trials are below the geometric middle, sqrt(5000 * 100000).
  int below = 0;
  for (const auto& j : a) below += j.iterations < std::sqrt(5000.0 * 100000.0);
  EXPECT_NEAR(below / 500.0, 0.5, 0.07);
}

}  // namespace
}  // namespace ragmig::sim
